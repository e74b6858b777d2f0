-- Rows a runner updates at every bar (bench/live.ts, issue 11): its run's state, its strategy's stats, and
-- the intent it settles. With full pages an update cannot stay on its page, so every bar wrote a new
-- version elsewhere plus an entry in every index, and the embedded database (PGlite has no autovacuum)
-- grew without bound. Free room per page lets these be HOT updates that page pruning reclaims.
ALTER TABLE strategy_runs SET (fillfactor = 50);
ALTER TABLE strategies SET (fillfactor = 70);
ALTER TABLE strategy_orders SET (fillfactor = 80);
