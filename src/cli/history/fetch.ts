import { SingleBar } from 'cli-progress'
import { pino } from 'pino'
import { historyCaches } from '../../backtests/history-cache.js'
import { countBars, fillBars, type HistorySource, loadFunding } from '../../backtests/history-store.js'
import { symbolRules, UpstreamHistory } from '../../backtests/upstream-history.js'
import type { Config } from '../../config.js'
import { exchangeServerTime } from '../../market/exchange-clock.js'
import { createMarketData } from '../../market/market-data.js'
import { TIMEFRAME_MS } from '../../strategies/timeframes.js'
import { openStorage } from '../../storage.js'
import { withUpstream } from '../../upstream.js'
import type { HistoryFetchOptions } from './commands.js'

interface Fetched {
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

/**
 * Fills the store for every symbol × interval as a backtest over the range would, through the same
 * loadBars/loadFunding (archive files first, REST for the rest, coalesced with any job on the same store).
 * Progress on stderr (files, bars, bars/s); the summary, or --json, on stdout.
 */
export async function runHistoryFetch(config: Config, options: HistoryFetchOptions): Promise<void> {
  const logger = pino({ level: config.logLevel }, process.stderr)
  const cleanups: (() => Promise<unknown>)[] = []
  const storage = await openStorage(config, 'history fetch')
  try {
    const upstream = await withUpstream(config, logger, cleanups)
    const market = createMarketData(upstream, Date.now)
    cleanups.push(() => market.close())
    const upstreamHistory = new UpstreamHistory(market)
    let requests = 0
    const rest: HistorySource = {
      klines: (...page) => (requests++, upstreamHistory.klines(...page)),
      fundingRates: (...page) => (requests++, upstreamHistory.fundingRates(...page)),
    }
    const now = await exchangeServerTime(market)
    const end = Math.min(options.end ?? now, now)
    const warnings: Record<string, unknown>[] = []
    const archive = market.archive && {
      client: market.archive,
      warn: (details: Record<string, unknown>, message: string) => {
        warnings.push(details)
        logger.warn(details, message)
      },
    }
    if (!archive) logger.warn({}, 'UPSTREAM_ARCHIVE_URL is off: every bar comes over REST')
    const progress = fetchProgress(options.json)
    const restRequests = () => requests
    const results: Fetched[] = []
    const started = performance.now()
    for (const symbol of options.symbols) {
      await symbolRules(market, symbol) // an unknown symbol is refused before anything is fetched
      for (const interval of options.intervals) {
        const before = { files: market.archive?.stats.files ?? 0, rest: restRequests(), at: performance.now(), cpu: process.cpuUsage() }
        const stop = progress.track(`${symbol} ${interval}`, () => ({ files: market.archive?.stats.files ?? 0, bars: market.archive?.stats.bars ?? 0 }))
        const intervalMs = TIMEFRAME_MS[interval]
        const last = await fillBars(storage.database.db, rest, { symbol, interval, intervalMs, start: options.start, end, now }, archive)
        const bars = await countBars(storage.database.db, symbol, interval, intervalMs, options.start, last)
        const klinesMs = Math.round(performance.now() - before.at)
        const cpu = process.cpuUsage(before.cpu)
        const funding = await loadFunding(storage.database.db, rest, historyCaches(0, 0), { symbol, start: options.start, end, now })
        stop()
        results.push({
          symbol,
          interval,
          bars,
          funding_events: funding.time.length,
          archive_files: (market.archive?.stats.files ?? 0) - before.files,
          rest_requests: restRequests() - before.rest,
          klines_ms: klinesMs,
          klines_cpu_ms: Math.round((cpu.user + cpu.system) / 1000),
          ms: Math.round(performance.now() - before.at),
        })
      }
    }
    const ms = Math.round(performance.now() - started)
    const bars = results.reduce((sum, r) => sum + r.bars, 0)
    const summary = { fetched: results, bars, ms, bars_per_s: ms > 0 ? Math.round((bars / ms) * 1000) : bars, refused_files: warnings.length }
    if (options.json) process.stdout.write(`${JSON.stringify(summary)}\n`)
    else {
      for (const r of results) process.stdout.write(`${r.symbol} ${r.interval}: ${r.bars} bars, ${r.funding_events} funding events (${r.archive_files} archive files, ${r.rest_requests} REST requests, ${r.ms} ms)\n`)
      process.stdout.write(`${bars} bars in ${ms} ms${warnings.length > 0 ? `; ${warnings.length} archive files refused, their spans came over REST` : ''}\n`)
    }
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup()
    await storage.close()
  }
}

/** A progress bar per symbol and interval on stderr: archive files, bars read, bars per second. */
function fetchProgress(quiet: boolean) {
  return {
    track(label: string, read: () => { files: number; bars: number }): () => void {
      if (quiet || !process.stderr.isTTY) return () => undefined
      const bar = new SingleBar({ stream: process.stderr, format: '{label} | {files} files | {bars} bars | {rate} bars/s', hideCursor: true, gracefulExit: false })
      const base = read()
      const at = performance.now()
      bar.start(1, 0, { label, files: 0, bars: 0, rate: 0 })
      const timer = setInterval(() => {
        const now = read()
        const bars = now.bars - base.bars
        bar.update(0, { label, files: now.files - base.files, bars, rate: Math.round((bars / Math.max(1, performance.now() - at)) * 1000) })
      }, 200)
      return () => {
        clearInterval(timer)
        bar.stop()
      }
    },
  }
}
