-- Issue 30, protective exits in dry runs: a run keeps the exits it was deployed with (its strategy's, as
-- written), as it keeps its params: the runner, a pause and a resume read the run's own, never an edit
-- made since. Null for none (and for every live run until issue 31 places exits on the exchange).
ALTER TABLE strategy_runs ADD COLUMN exits jsonb;
-- A protective exit books its own order (reduce-only, filled at the exit): its reason, stop_loss,
-- take_profit or trailing_stop; null for the strategy's own orders.
ALTER TABLE strategy_orders ADD COLUMN exit_reason text;
