-- Backtest speed (issue 13).
-- A job's result is written once and read whole, never queried inside: it is stored as the zlib
-- stream of its JSON text (backtests/result-codec.ts), compressed by the job's node. For 5,683 trades
-- (1.54 MB of JSON) that is 227 kB in 4.7 ms of native zlib, where PostgreSQL's own TOAST compression
-- kept 297 kB and, on PGlite, took 25–45 ms of its single thread; jsonb parsing added 45–55 ms more.
-- Results written before this migration keep their JSON text (it starts with "{", never with zlib's 0x78).
-- EXTERNAL: the bytes are compressed already; TOAST does not try again.
ALTER TABLE backtest_jobs ALTER COLUMN result TYPE bytea USING convert_to(result::text, 'UTF8');
ALTER TABLE backtest_jobs ALTER COLUMN result SET STORAGE EXTERNAL;

-- Bumped on every rewrite of a chunk, so a process that keeps decoded chunks in memory
-- (backtests/history-cache.ts) can tell, without reading the data, that its copy is current.
ALTER TABLE kline_chunks ADD COLUMN revision bigint NOT NULL DEFAULT 1;
