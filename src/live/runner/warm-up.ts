import type { HistorySource, KlineRow } from '../../backtests/history-store.js'
import type { FundingEvent } from '../brokers/broker.js'
import type { RunFunding } from './run-funding.js'

/** Bars a warm-up reads: the smallest that holds the template's warm-up, each the largest page of one klines weight (1, 2, 5, 10). */
const WARMUP_WINDOWS = [99, 499, 1_000, 1_500]
/** 1,000 funding rows (a page) at the most frequent schedule, hourly, less a day of margin. */
const FUNDING_PAGE_SPAN_MS = 40 * 24 * 3_600_000

/**
 * The closed bars of a symbol's warm-up window ending at `end` (exclusive), for a warm-up of `bars`.
 * Runners of a symbol started within one bar ask for the same window, one of a few sizes (the largest page
 * of each of Binance's weights), so SharedHistory sends it once per size.
 */
export async function warmupBars(history: HistorySource, symbol: string, timeframe: string, intervalMs: number, bars: number, end: number): Promise<{ start: number; closed: KlineRow[] }> {
  const window = WARMUP_WINDOWS.find((w) => w >= bars + 2) ?? WARMUP_WINDOWS[WARMUP_WINDOWS.length - 1]!
  const start = end - window * intervalMs
  const rows = await history.klines(symbol, timeframe, start, end - 1, window)
  return { start, closed: rows.filter((r) => r.openTime + intervalMs <= end) }
}

/** Funding from `from` to `end`: over the shared window where one page surely holds it (funding is at most hourly), kept from `from` on. */
export async function warmupFunding(funding: RunFunding, windowStart: number, end: number, from: number): Promise<FundingEvent[]> {
  const fundingStart = Math.max(windowStart, end - FUNDING_PAGE_SPAN_MS)
  return from >= fundingStart ? (await funding.read(fundingStart, end)).filter((f) => f.time >= from) : funding.read(from, end)
}
