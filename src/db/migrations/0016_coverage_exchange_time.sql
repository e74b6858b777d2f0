-- Issue 21: the exchange's clock decides which bars are closed. A coverage span records the exchange's time
-- (GET /fapi/v1/time) it was fetched at. Spans written before (NULL) were judged by our wall clock and may
-- hold a bar stored while it was still forming; the history store fetches the unsettled part of such a span
-- again on its next read (revalidation on read), and the final bar replaces the forming one.
ALTER TABLE market_coverage ADD COLUMN exchange_time_ms bigint;
