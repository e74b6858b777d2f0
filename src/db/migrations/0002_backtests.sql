-- Backtest jobs, the compact store of market history they run on, and the event outbox.

CREATE TABLE backtest_jobs (
  id            text PRIMARY KEY,
  user_id       integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  status        text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  template_id   text NOT NULL,
  config        jsonb NOT NULL,
  submitted_at  timestamptz NOT NULL,
  started_at    timestamptz,
  finished_at   timestamptz,
  -- The worker's last sign of life; a running job whose heartbeat stops is failed as WORKER_LOST.
  heartbeat_at  timestamptz,
  progress      double precision NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 1),
  metrics       jsonb,
  result        jsonb,
  error         jsonb,
  cancel_reason text
);
CREATE INDEX backtest_jobs_user_submitted_idx ON backtest_jobs (user_id, submitted_at DESC, id DESC);
-- The per-user limit of 5 queued or running jobs, and the worker-lost sweep, read only live jobs.
CREATE INDEX backtest_jobs_live_idx ON backtest_jobs (user_id) WHERE status IN ('queued', 'running');

-- Klines in chunks of consecutive bars: one row per (symbol, interval, chunk start), columns packed
-- as little-endian float64 arrays. A year of 5m bars is 13 rows instead of 105,120.
CREATE TABLE kline_chunks (
  symbol      text NOT NULL,
  interval    text NOT NULL,
  chunk_start bigint NOT NULL,
  bars        integer NOT NULL,
  data        bytea NOT NULL,
  PRIMARY KEY (symbol, interval, chunk_start)
);

-- Which [from, to) spans of upstream history are already stored, so gaps the exchange itself has
-- are known as gaps and never fetched again.
CREATE TABLE market_coverage (
  symbol   text NOT NULL,
  dataset  text NOT NULL,
  from_ms  bigint NOT NULL,
  to_ms    bigint NOT NULL,
  PRIMARY KEY (symbol, dataset, from_ms)
);

CREATE TABLE funding_events (
  symbol       text NOT NULL,
  funding_time bigint NOT NULL,
  rate         double precision NOT NULL,
  mark_price   double precision,
  PRIMARY KEY (symbol, funding_time)
);

-- The outbox: events are written in the transaction of the change that causes them; the webhook
-- pipeline delivers them.
CREATE TABLE events (
  id         text PRIMARY KEY,
  user_id    integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  type       text NOT NULL,
  data       jsonb NOT NULL,
  created_at timestamptz NOT NULL
);
CREATE INDEX events_user_created_idx ON events (user_id, created_at);
