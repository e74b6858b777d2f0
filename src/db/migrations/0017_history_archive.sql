-- Issue 25: a kline chunk stores eight float64 columns (open time, OHLC, volume, quote volume, number of
-- trades) where it stored six. Chunks of six columns cannot give the two new ones, and reading them as NaN
-- would hide data the exchange has, so they are deleted with the coverage of their datasets: the next read
-- fetches those spans again (from the public data archive where it has them, issue 25), at the new format.
DELETE FROM kline_chunks;
DELETE FROM market_coverage WHERE dataset LIKE 'klines:%';

-- Issue 25: which node is downloading an archive file for the store, so nodes sharing it download each
-- file once (backtests/archive-claims.ts). A claim lapses at claimed_until (the database's clock, in ms),
-- so a node that died holding one delays the others by at most its lease.
CREATE TABLE archive_claims (
  file text PRIMARY KEY,
  node text NOT NULL,
  claimed_until bigint NOT NULL
);
