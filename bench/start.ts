import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type Goal, atMost } from './support/ceiling.js'
import { log } from './support/log.js'
import { type BenchServer, cpuMsOf, ensureBuilt, memoryOf, startServer } from './support/server.js'
import type { SuiteOptions, SuiteResult } from './support/suite.js'

/** Goals from issue 13, for a first start (fresh DATA_DIR) and a second start on the same DATA_DIR. */
const GOALS = {
  cold: { ready_ms: 3000, rss_after_start_mb: 250, rss_after_market_mb: 350 },
  warm: { ready_ms: 1000, rss_after_start_mb: 250, rss_after_market_mb: 350 },
}

/**
 * Every market endpoint an anonymous client can call, once each, with the parameters a first visitor
 * would send. The plan-gated /v1/market/klines needs a data key and is left out.
 */
const MARKET_PATHS = [
  '/fapi/v1/ping',
  '/fapi/v1/time',
  '/fapi/v1/exchangeInfo',
  '/fapi/v1/klines?symbol=BTCUSDT&interval=1h&limit=500',
  '/fapi/v1/premiumIndex?symbol=BTCUSDT',
  '/fapi/v1/premiumIndex',
  '/fapi/v1/openInterest?symbol=BTCUSDT',
  '/fapi/v1/fundingInfo',
  '/fapi/v1/ticker/price',
  '/fapi/v1/fundingRate?symbol=BTCUSDT',
  '/fapi/v1/ticker/24hr',
  '/futures/data/openInterestHist?symbol=BTCUSDT&period=1h',
  '/futures/data/topLongShortAccountRatio?symbol=BTCUSDT&period=1h',
  '/futures/data/topLongShortPositionRatio?symbol=BTCUSDT&period=1h',
  '/futures/data/globalLongShortAccountRatio?symbol=BTCUSDT&period=1h',
  '/futures/data/takerlongshortRatio?symbol=BTCUSDT&period=1h',
  '/topLongShortPositionRatio?symbol=BTCUSDT&period=1h',
  '/topLongShortAccountRatio?symbol=BTCUSDT&period=1h',
  '/funding/rates',
  '/funding/rates/BTCUSDT',
  '/funding/rates/BTCUSDT/history',
  '/ticker/24hr/active',
  '/long-short/position-ratio/BTCUSDT',
  '/long-short/account-ratio/BTCUSDT',
  '/smart-money/signal/overview?symbol=BTCUSDT',
  '/smart-money/signal/list',
  '/whale-board',
  '/v1/market/exchange-info?symbol=BTCUSDT',
  '/v1/market/trades?symbol=BTCUSDT',
]

/**
 * Embedded `npm start` (`node dist/cli.js serve`, no DATABASE_URL, no UPSTREAM_URL: PGlite and the
 * built-in replay exchange) on a fresh DATA_DIR, then again on the same DATA_DIR: time from spawning
 * the process to the first 200 from /healthz, RSS right then, and RSS after every market endpoint once.
 * --duration, --connections and --warmup do not apply.
 */
export async function run(_options: SuiteOptions): Promise<SuiteResult> {
  await ensureBuilt()
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-start-'))
  const failures: string[] = []
  try {
    const cold = await measureStart('cold', dataDir, GOALS.cold, failures)
    const warm = await measureStart('warm', dataDir, GOALS.warm, failures)
    return { report: { suite: 'start', market_paths: MARKET_PATHS.length, cold, warm }, failures }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

async function measureStart(label: string, dataDir: string, goals: (typeof GOALS)['cold'], failures: string[]): Promise<Record<string, unknown>> {
  // The npm start defaults: only what the bench needs to find the process (HOST, PORT, DATA_DIR, LOG_LEVEL) is set.
  const server = await startServer({ dataDir, env: { UPSTREAM_URL: '', DATABASE_URL: '', REDIS_URL: '' } })
  try {
    const afterStart = memoryOf(server.pid)
    const cpuMs = cpuMsOf(server.pid)
    const loadAverage = os.loadavg()[0]!
    log(`${label}: first 200 after ${server.readyMs} ms (${cpuMs} ms of CPU, load ${loadAverage.toFixed(1)}), RSS ${afterStart.rss_mb} MB (peak ${afterStart.peak_rss_mb} MB)`)
    await callEveryMarketPath(server, `${label}`, failures)
    const afterMarket = memoryOf(server.pid)
    log(`${label}: after ${MARKET_PATHS.length} market endpoints RSS ${afterMarket.rss_mb} MB (peak ${afterMarket.peak_rss_mb} MB)`)
    const goal: Record<string, Goal> = {
      ready_ms: atMost(server.readyMs, goals.ready_ms),
      rss_after_start_mb: atMost(afterStart.rss_mb, goals.rss_after_start_mb),
      rss_after_market_mb: atMost(afterMarket.rss_mb, goals.rss_after_market_mb),
    }
    return {
      ready_ms: server.readyMs,
      // Not goals: what the start cost in CPU (all threads, up to the first 200) and how busy the host was.
      cpu_ms_to_ready: cpuMs,
      load_average_1m: Math.round(loadAverage * 100) / 100,
      rss_after_start_mb: afterStart.rss_mb,
      rss_after_market_mb: afterMarket.rss_mb,
      peak_rss_mb: afterMarket.peak_rss_mb,
      goal,
      met: Object.values(goal).every((g) => g.met),
    }
  } finally {
    await server.stop()
  }
}

async function callEveryMarketPath(server: BenchServer, label: string, failures: string[]): Promise<void> {
  for (const pathWithQuery of MARKET_PATHS) {
    const response = await fetch(`${server.url}${pathWithQuery}`)
    await response.arrayBuffer()
    if (response.status !== 200) failures.push(`${label}: GET ${pathWithQuery} answered ${response.status}`)
  }
}
