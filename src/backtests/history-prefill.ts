import type { Db } from '../db/connect.js'
import { exchangeServerTime } from '../market/exchange-clock.js'
import type { MarketData } from '../market/market-data.js'
import { TIMEFRAME_MS, TIMEFRAMES, type Timeframe } from '../strategies/timeframes.js'
import { historyCaches } from '../work/history-cache.js'
import { countBars, fillBars, type HistorySource, loadFunding } from './history-store.js'
import { symbolRules, UpstreamHistory } from './upstream-history.js'
import { SYMBOL } from '../market/symbol-pattern.js'

/** What an operator asks to store: every symbol × interval from `start` (unix ms) to `end` or the exchange's now. */
export interface PrefillRequest {
  symbols: string[]
  intervals: Timeframe[]
  start: number
  end?: number
}

export interface Prefilled {
  symbol: string
  interval: string
  bars: number
  funding_events: number
  archive_files: number
  rest_requests: number
  /** The klines' part of `ms` (the funding follows them). */
  klines_ms: number
  /** CPU time (user and system, every thread of the process: parsing, the thread pool's zlib, the embedded database) over klines_ms. */
  klines_cpu_ms: number
  ms: number
}

export interface PrefillSummary {
  fetched: Prefilled[]
  bars: number
  ms: number
  bars_per_s: number
  refused_files: number
}

export interface PrefillDeps {
  db: Db
  market: MarketData
  warn(details: Record<string, unknown>, message: string): void
  /** Called as each symbol × interval starts; the returned function as it ends (the CLI's progress bar). */
  track?(label: string, read: () => { files: number; bars: number }): () => void
}

/**
 * Fills the store for every symbol × interval as a backtest over the range would, through the same
 * fillBars/loadFunding (archive files first, REST for the rest, coalesced with any job on the same
 * store), reading nothing back but the counts. Runs in `perpetua history fetch`, or inside the server
 * that holds an embedded DATA_DIR (its control socket), where the archive's counters also count files
 * its own jobs downloaded meanwhile.
 */
export async function prefillHistory(deps: PrefillDeps, request: PrefillRequest): Promise<PrefillSummary> {
  const { db, market } = deps
  const upstreamHistory = new UpstreamHistory(market)
  let requests = 0
  const rest: HistorySource = {
    klines: (...page) => (requests++, upstreamHistory.klines(...page)),
    fundingRates: (...page) => (requests++, upstreamHistory.fundingRates(...page)),
  }
  const now = await exchangeServerTime(market)
  const end = Math.min(request.end ?? now, now)
  let refused = 0
  const archive = market.archive && {
    client: market.archive,
    warn: (details: Record<string, unknown>, message: string) => {
      refused++
      deps.warn(details, message)
    },
  }
  if (!archive) deps.warn({}, 'UPSTREAM_ARCHIVE_URL is off: every bar comes over REST')
  const results: Prefilled[] = []
  const started = performance.now()
  for (const symbol of request.symbols) {
    await symbolRules(market, symbol) // an unknown symbol is refused before anything is fetched
    for (const interval of request.intervals) {
      const before = { files: market.archive?.stats.files ?? 0, rest: requests, at: performance.now(), cpu: process.cpuUsage() }
      const stop = deps.track?.(`${symbol} ${interval}`, () => ({ files: market.archive?.stats.files ?? 0, bars: market.archive?.stats.bars ?? 0 })) ?? (() => undefined)
      try {
        const intervalMs = TIMEFRAME_MS[interval]
        const last = await fillBars(db, rest, { symbol, interval, intervalMs, start: request.start, end, now }, archive)
        const bars = await countBars(db, symbol, interval, intervalMs, request.start, last)
        const klinesMs = Math.round(performance.now() - before.at)
        const cpu = process.cpuUsage(before.cpu)
        const funding = await loadFunding(db, rest, historyCaches(0), { symbol, start: request.start, end, now })
        results.push({
          symbol,
          interval,
          bars,
          funding_events: funding.time.length,
          archive_files: (market.archive?.stats.files ?? 0) - before.files,
          rest_requests: requests - before.rest,
          klines_ms: klinesMs,
          klines_cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
          ms: Math.round(performance.now() - before.at),
        })
      } finally {
        stop()
      }
    }
  }
  const ms = Math.round(performance.now() - started)
  const bars = results.reduce((sum, r) => sum + r.bars, 0)
  return { fetched: results, bars, ms, bars_per_s: ms > 0 ? Math.round((bars / ms) * 1000) : bars, refused_files: refused }
}

/**
 * A prefill request as the control socket carries it (JSON from a local CLI): checked again here, as
 * any request crossing a process boundary is; the CLI checked the same with its own messages first.
 */
export function prefillRequestOf(args: Record<string, unknown>): PrefillRequest {
  const { symbols, intervals, start, end } = args
  if (!Array.isArray(symbols) || symbols.length === 0 || !symbols.every((s) => typeof s === 'string' && SYMBOL.test(s))) throw new Error('symbols must be a list of symbols such as BTCUSDT')
  if (!Array.isArray(intervals) || intervals.length === 0 || !intervals.every((i) => (TIMEFRAMES as readonly unknown[]).includes(i))) throw new Error(`intervals must be a list of ${TIMEFRAMES.join(', ')}`)
  if (typeof start !== 'number' || !Number.isFinite(start)) throw new Error('start must be unix milliseconds')
  if (end !== undefined && (typeof end !== 'number' || !Number.isFinite(end) || end <= start)) throw new Error('end must be unix milliseconds after start')
  return { symbols: symbols as string[], intervals: intervals as Timeframe[], start, ...(end === undefined ? {} : { end }) }
}
