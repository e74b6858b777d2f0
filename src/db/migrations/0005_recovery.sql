-- Issue 12, recovery. A backtest whose worker died runs once more on a live worker. `attempt` numbers
-- the runs and fences them: a run writes heartbeats and its result only while the row carries its
-- number, so a worker that lost the job (or only seemed dead) can neither beat nor finish it.
-- heartbeat_at is null while a run is waiting to be claimed (queued, or handed to a re-run).
ALTER TABLE backtest_jobs ADD COLUMN attempt integer NOT NULL DEFAULT 1;
