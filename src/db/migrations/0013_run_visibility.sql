-- What a trader must be able to see (issue 21). Why a strategy is (or last was) in error: written with the
-- move into error, kept through the edit back to draft, cleared by the next deploy (docs/decisions/live.md, "What a trader sees of a run").
ALTER TABLE strategies ADD COLUMN last_error_code text;
ALTER TABLE strategies ADD COLUMN last_error_message text;
ALTER TABLE strategies ADD COLUMN last_error_at timestamptz;
-- The open time of the last bar a run acted on, written with the run's state (the same row update, so no
-- new lock); the strategy record shows its latest run's.
ALTER TABLE strategy_runs ADD COLUMN last_bar_at timestamptz;
-- Starts that failed in a row (any node); the third moves the strategy to error. A start that succeeds resets it.
ALTER TABLE strategy_runs ADD COLUMN start_failures integer NOT NULL DEFAULT 0;
