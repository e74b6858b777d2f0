import { SingleBar } from 'cli-progress'
import { pino } from 'pino'
import { type PrefillRequest, type PrefillSummary, prefillHistory } from '../../backtests/history-prefill.js'
import type { Config } from '../../config.js'
import { controlSocketPath, sendControlCommand } from '../../control/control-socket.js'
import { inspectLock } from '../../db/data-dir-lock.js'
import { socketDirFor } from '../../db/pglite-host.js'
import { createMarketData } from '../../market/market-data.js'
import { openStorage } from '../../storage.js'
import { withUpstream } from '../../upstream.js'

/** The prefill's request (symbols, intervals, start, end in unix ms) and how to print it. */
export interface HistoryFetchOptions extends PrefillRequest {
  json: boolean
}

/** A prefill inside a running server waits this long for its answer (years of 1m bars over REST can take hours). */
const IN_SERVER_TIMEOUT_MS = 24 * 3_600_000

/**
 * Fills the store for every symbol × interval (backtests/history-prefill.ts). Here, with a progress
 * bar on stderr; or, when a running `perpetua serve` holds the embedded DATA_DIR, inside that server
 * through its control socket (the store is its single-session database), printing when it is done.
 * The summary, or --json, on stdout.
 */
export async function runHistoryFetch(config: Config, options: HistoryFetchOptions): Promise<void> {
  const { json, ...request } = options
  const lock = config.databaseUrl ? { held: false as const } : inspectLock(config.dataDir)
  if (lock.held) {
    process.stderr.write(`perpetua process ${lock.pid} holds ${config.dataDir}: the history is fetched inside it, and its summary printed here when done\n`)
    const summary = (await sendControlCommand(controlSocketPath(socketDirFor(config.dataDir)), 'history.fetch', request, { timeoutMs: IN_SERVER_TIMEOUT_MS })) as PrefillSummary
    return printSummary(summary, json)
  }
  const logger = pino({ level: config.logLevel }, process.stderr)
  const cleanups: (() => Promise<unknown>)[] = []
  const storage = await openStorage(config, 'history fetch')
  try {
    const upstream = await withUpstream(config, logger, cleanups)
    const market = createMarketData(upstream, Date.now)
    cleanups.push(() => market.close())
    const summary = await prefillHistory({ db: storage.database.db, market, warn: (details, message) => logger.warn(details, message), ...fetchProgress(json) }, request)
    printSummary(summary, json)
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup()
    await storage.close()
  }
}

function printSummary(summary: PrefillSummary, json: boolean): void {
  if (json) return void process.stdout.write(`${JSON.stringify(summary)}\n`)
  for (const r of summary.fetched) process.stdout.write(`${r.symbol} ${r.interval}: ${r.bars} bars, ${r.funding_events} funding events (${r.archive_files} archive files, ${r.rest_requests} REST requests, ${r.ms} ms)\n`)
  const refused = summary.refused_files > 0 ? `; ${summary.refused_files} archive files refused, their spans came over REST` : ''
  process.stdout.write(`${summary.bars} bars in ${summary.ms} ms${refused}\n`)
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
