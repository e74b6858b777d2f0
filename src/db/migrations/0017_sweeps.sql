-- Issue 23, parameter sweeps. A sweep is a job of jobs: its configurations run in tasks (chunks of
-- configurations) on the job queue, each task fenced by its attempt like a backtest job, and a last
-- 'statistics' task computes the sweep's result once every run is stored.
CREATE TABLE backtest_sweeps (
  id             text PRIMARY KEY,
  user_id        integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  status         text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  template_id    text NOT NULL,
  -- The request resolved: base (a backtest job's config), grid or random, objective, cscv_blocks, walk_forward.
  config         jsonb NOT NULL,
  -- Every configuration's resolved params, in run order (run_no 1 is the first).
  configurations jsonb NOT NULL,
  runs_total     integer NOT NULL,
  -- Runs stored so far: counted by the insert that stored them, so a run re-stored by a re-run task counts once.
  runs_done      integer NOT NULL DEFAULT 0,
  -- The days of every run's daily equity (epoch ms, little-endian float64), written by the first run stored.
  days           bytea,
  submitted_at   timestamptz NOT NULL,
  started_at     timestamptz,
  finished_at    timestamptz,
  result         jsonb,
  error          jsonb,
  cancel_reason  text
);
CREATE INDEX backtest_sweeps_user_submitted_idx ON backtest_sweeps (user_id, submitted_at DESC, id DESC);
CREATE INDEX backtest_sweeps_live_idx ON backtest_sweeps (user_id) WHERE status IN ('queued', 'running');

-- One queue job each. kind 'runs' runs configurations first_run .. first_run + run_count - 1; the one
-- 'statistics' task waits (status 'waiting') until every 'runs' task is done. attempt and heartbeat_at
-- fence a task exactly as backtest_jobs' (0005_recovery.sql): null heartbeat = waiting to be claimed.
CREATE TABLE backtest_sweep_tasks (
  sweep_id     text NOT NULL REFERENCES backtest_sweeps (id) ON DELETE CASCADE,
  task_no      integer NOT NULL,
  kind         text NOT NULL CHECK (kind IN ('runs', 'statistics')),
  status       text NOT NULL CHECK (status IN ('waiting', 'queued', 'running', 'done')),
  first_run    integer NOT NULL,
  run_count    integer NOT NULL,
  attempt      integer NOT NULL DEFAULT 1,
  heartbeat_at timestamptz,
  PRIMARY KEY (sweep_id, task_no)
);
CREATE INDEX backtest_sweep_tasks_running_idx ON backtest_sweep_tasks (heartbeat_at) WHERE status = 'running';

-- One row per configuration run, stored exactly once (the key), however often its task ran.
CREATE TABLE backtest_sweep_runs (
  sweep_id  text NOT NULL REFERENCES backtest_sweeps (id) ON DELETE CASCADE,
  run_no    integer NOT NULL,
  params    jsonb NOT NULL,
  metrics   jsonb NOT NULL,
  -- The objective metric as a number, for sorting (null when the metric is undefined).
  objective double precision,
  -- The daily equity values (engine/daily-curve.ts) as little-endian float64; the days are the sweep's.
  equity    bytea NOT NULL,
  PRIMARY KEY (sweep_id, run_no)
);
ALTER TABLE backtest_sweep_runs ALTER COLUMN equity SET STORAGE EXTERNAL;
