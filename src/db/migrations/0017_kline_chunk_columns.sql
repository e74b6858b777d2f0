-- Issue 25: a kline chunk stores eight float64 columns (open time, OHLC, volume, quote volume, number of
-- trades) where it stored six. Chunks of six columns cannot give the two new ones, and reading them as NaN
-- would hide data the exchange has, so they are deleted with the coverage of their datasets: the next read
-- fetches those spans again (from the public data archive where it has them, issue 25), at the new format.
DELETE FROM kline_chunks;
DELETE FROM market_coverage WHERE dataset LIKE 'klines:%';
