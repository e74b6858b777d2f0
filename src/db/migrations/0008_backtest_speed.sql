-- Backtest speed (issue 13).
-- A job's result is written once and read whole, never queried inside: json keeps the text as sent,
-- where jsonb parsed it into its binary form on write and printed it back on read. For 5,683 trades
-- (1.6 MB) on PGlite: 75–95 ms to write as jsonb, 25–30 as json; 12.5 ms to read back, 5 as json.
ALTER TABLE backtest_jobs ALTER COLUMN result TYPE json USING result::json;

-- Bumped on every rewrite of a chunk, so a process that keeps decoded chunks in memory
-- (backtests/kline-chunk-cache.ts) can tell, without reading the data, that its copy is current.
ALTER TABLE kline_chunks ADD COLUMN revision bigint NOT NULL DEFAULT 1;
