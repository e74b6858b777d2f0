import { AppError } from '../http/errors.js'
import type { KlineKind } from '../market/archive/archive-files.js'
import { symbolDirectory } from '../market/exchange-info.js'
import { unlistedSymbol } from '../market/closest-symbol.js'
import type { MarketSession, UpstreamRequest } from '../market/market-data.js'
import { exchangeNow } from '../market/mirror/server-time.js'
import { okJson } from '../market/upstream-payloads.js'
import { TIMEFRAME_MS } from '../strategies/schemas.js'
import type { Timeframe } from '../strategies/timeframes.js'
import { isoTime } from './result-format.js'

/** The bars an exchange has for a symbol and timeframe: the first bar's open to the last closed bar's close. */
export interface Span {
  start: number
  end: number
}

const MINUTE = 60_000

/**
 * The first bar never changes once it exists (held an hour); the last closed bar moves once per bar
 * (held a minute at most, a bar's length below that). Weight 1 each (limit under 100), for klines and
 * mark-price klines alike.
 */
const firstBar = (symbol: string, interval: Timeframe, kind: KlineKind): UpstreamRequest => ({
  host: 'api',
  path: `/fapi/v1/${kind}`,
  query: { symbol, interval, startTime: 0, limit: 1 },
  weight: 1,
  ttlMs: 60 * MINUTE,
  staleMs: 60 * MINUTE,
})
const latestBars = (symbol: string, interval: Timeframe, kind: KlineKind): UpstreamRequest => ({
  host: 'api',
  path: `/fapi/v1/${kind}`,
  query: { symbol, interval, limit: 2 },
  weight: 1,
  ttlMs: Math.min(MINUTE, TIMEFRAME_MS[interval]),
  staleMs: 10 * MINUTE,
})
/** The last bar opening before `before` (a closed time): settled history, held an hour like the first bar. */
const lastBarBefore = (symbol: string, interval: Timeframe, kind: KlineKind, before: number): UpstreamRequest => ({
  host: 'api',
  path: `/fapi/v1/${kind}`,
  query: { symbol, interval, endTime: before - 1, limit: 1 },
  weight: 1,
  ttlMs: 60 * MINUTE,
  staleMs: 60 * MINUTE,
})

/**
 * What the exchange holds for `symbol` at `timeframe`, asked of the exchange itself: the first kline
 * from the epoch (Binance answers the listing's first bar; the replay exchange its first recorded or
 * derived one), and the latest two, of which those closed by the exchange's clock count. The same two
 * questions answer for Binance and the replay exchange, whose clock trails ours by months. null when
 * the exchange has no bar at all (the replay exchange serves no interval it cannot aggregate exactly).
 */
export async function exchangeCoverage(market: MarketSession, symbol: string, timeframe: Timeframe, now: number, kind: KlineKind = 'klines'): Promise<Span | null> {
  const intervalMs = TIMEFRAME_MS[timeframe]
  const first = klineOpenTimes(okJson(await market.fetch(firstBar(symbol, timeframe, kind)), symbol))
  if (first.length === 0) return null
  const [latest, exchangeTime] = await Promise.all([market.fetch(latestBars(symbol, timeframe, kind)), exchangeNow(market, now)])
  const closed = klineOpenTimes(okJson(latest, symbol)).filter((open) => open + intervalMs <= exchangeTime)
  const last = closed.length > 0 ? closed[closed.length - 1]! : undefined
  // A first bar still open (a symbol listed within the bar): nothing closed yet.
  if (last === undefined || last < first[0]!) return null
  return { start: first[0]!, end: last + intervalMs }
}

/**
 * What the exchange holds of `symbol` at `timeframe` that reaches into [from, to), where `to` is closed
 * history (no later than the exchange's clock): its first bar's open to the close of its last bar opening
 * before `to`; null when it has none there. Unlike exchangeCoverage this holds for a series that stopped
 * before the exchange's present (the replay's 1m bars end 2025-06-24, its clock may be later), and both
 * questions are held an hour: a closed span's bars do not change. Gaps inside the span count as held.
 */
export async function heldWithin(market: MarketSession, symbol: string, timeframe: Timeframe, from: number, to: number, kind: KlineKind = 'klines'): Promise<Span | null> {
  const first = klineOpenTimes(okJson(await market.fetch(firstBar(symbol, timeframe, kind)), symbol))
  if (first.length === 0 || first[0]! >= to) return null
  const last = klineOpenTimes(okJson(await market.fetch(lastBarBefore(symbol, timeframe, kind, to)), symbol)).pop()
  const end = last === undefined ? undefined : last + TIMEFRAME_MS[timeframe]
  if (end === undefined || end <= from) return null
  return { start: first[0]!, end }
}

function klineOpenTimes(payload: unknown): number[] {
  if (!Array.isArray(payload)) throw new AppError('UPSTREAM_UNAVAILABLE', 'the upstream exchange sent an unexpected klines payload')
  return payload.map((row) => Number((row as unknown[])[0])).filter((time) => Number.isSafeInteger(time))
}

/** GET /v1/backtest/coverage: the answer for a form, after checking the symbol against the exchange's list. */
export async function coverageOf(market: MarketSession, symbol: string, timeframe: Timeframe, now: number) {
  const listed = (await symbolDirectory(market)).symbols
  if (!listed.has(symbol)) throw unlistedSymbol('symbol', symbol, listed.keys())
  const span = await exchangeCoverage(market, symbol, timeframe, now)
  return { symbol, timeframe, start: span ? isoTime(span.start) : null, end: span ? isoTime(span.end) : null }
}

/** A time as "2024-03-01T00:00Z": minutes are the finest grid a timeframe has. */
export function isoMinute(ms: number): string {
  return `${isoTime(ms).slice(0, 16)}Z`
}

/** "from 2019-09-08T17:00Z to 2025-06-17T08:00Z", or that there is none. */
export function describeSpan(symbol: string, timeframe: string, span: Span | null): string {
  return span ? `the exchange has ${symbol} ${timeframe} bars from ${isoMinute(span.start)} to ${isoMinute(span.end)}` : `the exchange has no ${symbol} ${timeframe} bars at all`
}

/** A job whose range holds no bar of a symbol: it fails with this code rather than finishing empty. */
export class NoData extends Error {
  readonly code = 'NO_DATA'
}

interface LoadedSeries {
  symbol: string
  openTime: Float64Array
}

/** Open times on the timeframe's grid within [start, end]. */
function gridBars(intervalMs: number, start: number, end: number): number {
  const first = Math.ceil(start / intervalMs) * intervalMs
  const last = Math.floor(end / intervalMs) * intervalMs
  return last >= first ? (last - first) / intervalMs + 1 : 0
}

/**
 * Throws NoData when any symbol has no bar in [start, end], naming the symbol, timeframe, range and
 * what the exchange does hold (asked of it: `coverage` is exchangeCoverage, or undefined when that
 * question itself failed).
 */
export async function requireBars(
  series: readonly LoadedSeries[],
  request: { timeframe: Timeframe; start: number; end: number },
  coverage: (symbol: string) => Promise<Span | null | undefined>,
): Promise<void> {
  const empty = series.filter((s) => s.openTime.length === 0).map((s) => s.symbol)
  if (empty.length === 0) return
  throw new NoData(await noBarsText(empty, request, coverage))
}

/** "no BTCUSDT 1h bars between … and …; the exchange has BTCUSDT 1h bars from … to …. Choose a range inside the coverage (…)." */
async function noBarsText(symbols: readonly string[], request: { timeframe: Timeframe; start: number; end: number }, coverage: (symbol: string) => Promise<Span | null | undefined>): Promise<string> {
  const range = `between ${isoMinute(request.start)} and ${isoMinute(request.end)}`
  const parts = []
  for (const symbol of symbols) {
    const span = await coverage(symbol)
    const held = span === undefined ? 'what the exchange holds could not be read' : describeSpan(symbol, request.timeframe, span)
    parts.push(`no ${symbol} ${request.timeframe} bars ${range}; ${held}`)
  }
  return `${parts.join('. ')}. Choose a range inside the coverage (GET /v1/backtest/coverage tells it).`
}

/**
 * Before any run, from the exchange's coverage alone (heldWithin: two questions per symbol, held an
 * hour): 400 NO_DATA on `field` when a symbol has no bar reaching into [start, end], with the words a
 * job that loaded nothing fails with. Says nothing while the exchange cannot answer, or when bars reach
 * into the range but a gap holds all of it: the runs' own NO_DATA check (requireBars) still stands.
 */
export async function refuseRangeWithoutBars(market: MarketSession, request: { symbols: readonly string[]; timeframe: Timeframe; start: number; end: number }, now: number, field: string): Promise<void> {
  const empty: string[] = []
  try {
    for (const symbol of request.symbols) if ((await heldWithin(market, symbol, request.timeframe, request.start, request.end + 1)) === null) empty.push(symbol)
  } catch (error) {
    if (error instanceof AppError && error.code === 'UPSTREAM_UNAVAILABLE') return
    throw error
  }
  if (empty.length === 0) return
  const text = await noBarsText(empty, request, (symbol) => exchangeCoverage(market, symbol, request.timeframe, now).catch(() => undefined))
  throw new AppError('NO_DATA', text, { field })
}

/**
 * One line per symbol whose bars in [start, end] are incomplete ("BTCUSDT 1h: 721 of 744 bars missing
 * between … and …"), and per symbol without a funding event over a day or more; [] when complete.
 */
export function dataWarnings(
  series: readonly LoadedSeries[],
  funding: readonly { time: Float64Array }[],
  request: { timeframe: Timeframe; start: number; end: number },
): string[] {
  const intervalMs = TIMEFRAME_MS[request.timeframe]
  const range = `between ${isoMinute(request.start)} and ${isoMinute(request.end)}`
  const warnings: string[] = []
  const expected = gridBars(intervalMs, request.start, request.end)
  for (const [i, { symbol, openTime }] of series.entries()) {
    const missing = expected - openTime.length
    if (missing > 0) {
      const found = `bars found from ${isoMinute(openTime[0]!)} to ${isoMinute(openTime[openTime.length - 1]! + intervalMs)}`
      warnings.push(`${symbol} ${request.timeframe}: ${missing} of ${expected} bars missing ${range} (${found})`)
    }
    if (request.end - request.start >= 86_400_000 && (funding[i]?.time.length ?? 0) === 0) {
      warnings.push(`${symbol}: no funding events ${range}; funding was not applied`)
    }
  }
  return warnings
}
