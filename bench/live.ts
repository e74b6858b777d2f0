import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import pg from 'pg'
import { pino } from 'pino'
import { buildApp } from '../src/app.js'
import { findOrCreateUserByEmail } from '../src/auth/queries.js'
import { loadConfig } from '../src/config.js'
import { startQueue } from '../src/db/queue.js'
import { startRunners } from '../src/live/runner/start-runners.js'
import type { BarTiming } from '../src/live/runner/runner-deps.js'
import { createServices } from '../src/services.js'
import { openStorage } from '../src/storage.js'
import { atLeast, atMost } from './support/ceiling.js'
import { log } from './support/log.js'
import { startBenchReplay } from './support/replay.js'
import { summariseProfiles } from './support/cpu-profile.js'
import { ensureBuilt, REPO_ROOT } from './support/server.js'
import type { SuiteOptions, SuiteResult } from './support/suite.js'

/** Issue 11: dry-run strategies one process sustains on 1m bars, and p99 from a closed kline to its order. */
const GOAL_STRATEGIES = 1_000
const GOAL_P99_MS = 50
/** Strategies deployed at each stage (BENCH_LIVE_STAGES=100,250 for a short run); the ramp stops at the first stage not sustained. */
const STAGES = (process.env.BENCH_LIVE_STAGES ?? '250,500,1000,2000,3000').split(',').map(Number)
/**
 * 1m bars closing once a wall second: 60 × real time. Every symbol's bar closes at the same replay
 * minute, so each second brings one burst of every strategy's bar, as every minute does on Binance;
 * a stage is sustained only if each burst is done within the second (at real time it would have a minute).
 */
const SPEED = 60
const BAR_MS = 60_000 / SPEED
/** Inside the BTC and ETH minute recordings (2025-05-04 to 06-24), with a week of minutes ahead. */
const REPLAY_START = '2025-06-17T06:00:00Z'
/** Symbols traded: BTCUSDT and ETHUSDT (recorded minutes) and others the replay serves 1m klines for (derived from them). */
const SYMBOLS = 20
const CAPITAL = '400'
const DEPLOY_CONCURRENCY = 8
/** How long a stage may take for all its runners to start (warm-up over REST) before the bench gives up. */
const START_TIMEOUT_MS = 15 * 60_000

interface Variant {
  template_id: string
  params: (k: number) => Record<string, unknown>
}

/** Short periods and allow_short, so every strategy trades every few bars. */
const VARIANTS: Variant[] = [
  { template_id: 'sma_cross', params: (k) => ({ fast: 2 + (k % 3), slow: 6 + (k % 4), allow_short: true }) },
  { template_id: 'ema_cross', params: (k) => ({ fast: 2 + (k % 2), slow: 5 + (k % 4), allow_short: true }) },
  { template_id: 'rsi_reversion', params: (k) => ({ period: 3 + (k % 3), oversold: 40, overbought: 60, exit: 50, allow_short: true }) },
  { template_id: 'macd', params: (k) => ({ fast: 3, slow: 6 + (k % 3), signal: 3, allow_short: true }) },
  { template_id: 'bollinger_breakout', params: (k) => ({ period: 5 + (k % 3), width: 0.5, allow_short: true }) },
  { template_id: 'donchian_breakout', params: (k) => ({ entry_period: 3 + (k % 3), exit_period: 2, allow_short: true }) },
]

interface Deployed {
  id: string
  symbol: string
}

/**
 * Deploys dry-run strategies in stages through the HTTP API of one in-process Perpetua (embedded PGlite,
 * or a fresh database on BENCH_DATABASE_URL), with its runner pool, webhook pipeline and queue as
 * `perpetua serve` runs them, against a replay exchange in its own process at 60 × real time, and times
 * every stream bar from its receipt to its commit.
 */
export async function run(options: SuiteOptions): Promise<SuiteResult> {
  if (options.cpuProfile && !process.env.BENCH_LIVE_PROFILE_DIR) return profiled(options)
  await ensureBuilt()
  const replay = await startBenchReplay(['--speed', String(SPEED), '--start', REPLAY_START])
  const server = process.env.BENCH_DATABASE_URL ? await freshServerDatabase(process.env.BENCH_DATABASE_URL) : undefined
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-live-'))
  const failures: string[] = []
  const timings: BarTiming[] = []
  let recording = false
  const started = new Set<string>()
  try {
    const config = loadConfig({
      DATA_DIR: dataDir,
      ...(server ? { DATABASE_URL: server.url } : {}),
      LOG_LEVEL: 'warn',
      UPSTREAM_URL: replay.url,
      UPSTREAM_WS_URL: replay.url.replace(/^http/, 'ws'),
      RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000',
    })
    const logger = pino({ level: 'warn' }, process.stderr)
    const storage = await openStorage(config, 'bench')
    const boss = await startQueue(storage.database, (error) => log(`queue error: ${String(error)}`))
    const services = createServices(config, storage.database, Date.now, boss)
    await services.webhooks.start({ database: storage.database, log: logger })
    // As `perpetua serve` starts them (src/serve.ts), plus the timing hook.
    const pool = startRunners(config, storage.database, services.market, logger, services.runSignals, services.secrets, services.now, {
      observe: (timing) => {
        started.add(timing.strategyId)
        if (recording) timings.push(timing)
      },
    })!
    const app = await buildApp(services, { logger })
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    const stages: Record<string, unknown>[] = []
    try {
      const symbols = await minuteSymbols(replay.url, SYMBOLS)
      log(`live: ${symbols.length} symbols with 1m klines: ${symbols.join(' ')}`)
      const tokens: string[] = []
      const deployed: Deployed[] = []
      for (const target of STAGES) {
        const stageStarted = performance.now()
        while (tokens.length < Math.ceil(target / symbols.length)) {
          const userId = await findOrCreateUserByEmail(storage.database.db, `bench-live-${tokens.length}@perpetua.test`)
          tokens.push(await services.tokens.issue(userId))
        }
        log(`live: deploying ${target - deployed.length} more strategies (${target} in all)`)
        const upstreamBefore = await replay.stats()
        deployed.push(...(await deployMore(url, tokens, symbols, deployed.length, target)))
        const deployMs = Math.round(performance.now() - stageStarted)
        await waitFor(`${target} runners acting on stream bars`, START_TIMEOUT_MS, () => deployed.every((d) => started.has(d.id)), () => `${started.size} of ${target}`)
        const startMs = Math.round(performance.now() - stageStarted)
        const upstream = await replay.stats()
        const startRequests = Object.fromEntries(
          Object.entries(upstream.byPath)
            .map(([p, n]) => [p, n - (upstreamBefore.byPath[p] ?? 0)] as const)
            .filter(([, n]) => n > 0),
        )
        log(`live: ${target} strategies deployed in ${deployMs} ms, all acting ${startMs} ms after the stage began; measuring ${options.durationS} s`)

        timings.length = 0
        recording = true
        const cpuBefore = process.cpuUsage()
        const loopBefore = performance.eventLoopUtilization()
        const windowStart = performance.now()
        const windowStartUs = Number(process.hrtime.bigint() / 1000n)
        await sleep(options.durationS * 1000)
        const windowEnd = performance.now()
        const windowEndUs = Number(process.hrtime.bigint() / 1000n)
        const cpu = process.cpuUsage(cpuBefore)
        const loop = performance.eventLoopUtilization(loopBefore)
        // Bars received in the window get up to two bar periods more to be committed; a late one counts as late, a missing one as missing.
        await sleep(2 * BAR_MS)
        recording = false
        const result = summariseStage(target, deployed, timings, windowStart, windowEnd)
        stages.push({
          ...result,
          deploy_ms: deployMs,
          all_runners_acting_ms: startMs,
          upstream_requests_deploying_and_starting: startRequests,
          process_cpu_pct: Math.round(((cpu.user + cpu.system) / 1000 / (windowEnd - windowStart)) * 100),
          // Steadier than wall time on a shared host: every thread of the process (PGlite's included) per strategy-bar.
          process_cpu_us_per_strategy_bar: result.strategy_bars === 0 ? null : Math.round((cpu.user + cpu.system) / result.strategy_bars),
          host_load_avg_1m: Math.round(os.loadavg()[0]! * 10) / 10,
          event_loop_utilization: Math.round(loop.utilization * 1000) / 1000,
          window_hrtime_us: { start: windowStartUs, end: windowEndUs },
        })
        log(
          `live: ${target} strategies: sustained ${result.sustained}, order p50 ${result.order_latency_ms.p50} ms p99 ${result.order_latency_ms.p99} ms, ` +
            `slowest bar round ${result.slowest_bar_round_ms} ms, missing ${result.strategy_bars_missing}`,
        )
        if (!result.sustained) break
      }
      const profileDir = process.env.BENCH_LIVE_PROFILE_DIR
      if (profileDir) {
        // Under --cpu-prof the profiles are written at exit: leave now rather than after a shutdown that may drain a backlog.
        fs.writeFileSync(path.join(profileDir, 'report.json'), JSON.stringify(buildReport(stages, server !== undefined, options.durationS)))
        replay.stop()
        process.exit(0)
      }
    } finally {
      const stopping = performance.now()
      for (const [what, stop] of [
        ['HTTP', () => app.close()],
        ['runner pool', () => pool.stop()],
        ['webhooks', () => services.webhooks.close()],
        ['sandbox', () => services.sandbox.close()],
        ['queue', () => boss.stop({ graceful: false, timeout: 2000 })],
        ['market', () => services.market.close()],
        ['database', () => storage.close()],
      ] as const) {
        const began = performance.now()
        await stop()
        log(`live: stopped the ${what} in ${Math.round(performance.now() - began)} ms`)
      }
      log(`live: stopped in ${Math.round(performance.now() - stopping)} ms`)
    }

    const report = buildReport(stages, server !== undefined, options.durationS)
    for (const stage of stages) {
      if ((stage.orders as number) === 0) failures.push(`no orders at ${stage.strategies} strategies: the latency is unmeasured`)
    }
    return { report, failures }
  } finally {
    replay.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
    await server?.drop()
  }
}

/** The suite's JSON: the setup in words, each stage's figures, and the goals. */
function buildReport(stages: Record<string, unknown>[], onServer: boolean, durationS: number) {
  const sustained = stages.filter((s) => s.sustained === true).map((s) => s.strategies as number)
  const most = sustained.length > 0 ? Math.max(...sustained) : 0
  const atGoal = stages.find((s) => s.strategies === GOAL_STRATEGIES) as { order_latency_ms: { p99: number } } | undefined
  return {
    suite: 'live',
    setup: {
      database: onServer ? 'PostgreSQL server (BENCH_DATABASE_URL), a fresh database' : 'embedded PGlite (the npm start default)',
      process:
        'one in-process Perpetua as perpetua serve runs it: HTTP API on 127.0.0.1, runner pool (leases), webhook pipeline and queue; strategies created and deployed (dry_run) over HTTP',
      exchange: `the replay exchange in its own process, 1m klines from ${REPLAY_START} at ${SPEED}× real time (one bar a second per symbol, all symbols closing together)`,
      strategies: `${VARIANTS.map((v) => v.template_id).join(', ')} with short periods and allow_short, capital ${CAPITAL}, spread evenly over the symbols (one user per ${SYMBOLS} strategies: one per symbol each)`,
      latency:
        'for every stream bar a runner acts on: from performance.now() when the closed-kline message reached this process (KlineStreams, before parsing) to when the transaction that booked the bar committed; order latency is that time for the bars whose commit wrote an order intent (a strategy_orders row)',
      sustained: `every strategy committed every bar received in the window, and every bar was committed by all its strategies within one bar period (${BAR_MS} ms), so no backlog grows`,
      measured_s_per_stage: durationS,
    },
    stages,
    goal: {
      strategies_sustained: atLeast(most, GOAL_STRATEGIES),
      p99_ms_at_1000: atMost(atGoal?.order_latency_ms.p99 ?? Number.NaN, GOAL_P99_MS),
    },
    node: process.version,
  }
}

/**
 * --cpu-prof: the service runs in this process, so the suite runs again in a child under --cpu-prof
 * (main thread and the PGlite worker thread each write a profile) and each stage's profile is cut to its window.
 */
async function profiled(options: SuiteOptions): Promise<SuiteResult> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-live-prof-'))
  const child = spawn(
    process.execPath,
    ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--import', 'tsx', path.join(REPO_ROOT, 'bench', 'run.ts'), 'live', '--duration', String(options.durationS)],
    { cwd: REPO_ROOT, env: { ...process.env, BENCH_LIVE_PROFILE_DIR: dir }, stdio: ['ignore', 'inherit', 'inherit'] },
  )
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve))
  const report = JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8')) as { stages: { window_hrtime_us: { start: number; end: number }; cpu_profile?: unknown }[] }
  for (const stage of report.stages) stage.cpu_profile = summariseProfiles(dir, { startUs: stage.window_hrtime_us.start, endUs: stage.window_hrtime_us.end })
  return { report: { ...report, cpu_profile_dir: dir }, failures: code === 0 ? [] : [`the profiled run exited with ${code}`] }
}

/** Strategies `from`..`to`-1: strategy i trades symbol i mod S for user ⌊i / S⌋, so no user holds two runs on one symbol. */
async function deployMore(url: string, tokens: string[], symbols: string[], from: number, to: number): Promise<Deployed[]> {
  const out: Deployed[] = []
  let next = from
  await Promise.all(
    Array.from({ length: DEPLOY_CONCURRENCY }, async () => {
      while (next < to) {
        const i = next++
        const symbol = symbols[i % symbols.length]!
        const slot = Math.floor(i / symbols.length)
        const variant = VARIANTS[slot % VARIANTS.length]!
        const token = tokens[slot]!
        const created = await call<{ id: string }>(url, token, 'POST', '/v1/strategies', {
          name: `bench ${i}`,
          template_id: variant.template_id,
          params: variant.params(Math.floor(slot / VARIANTS.length)),
          symbols: [symbol],
          timeframe: '1m',
          capital: CAPITAL,
          leverage: 2,
        })
        await call(url, token, 'POST', `/v1/strategies/${created.id}/deploy`, { dry_run: true })
        out.push({ id: created.id, symbol })
      }
    }),
  )
  return out
}

async function call<T>(url: string, token: string, method: string, pathname: string, body: unknown): Promise<T> {
  const response = await fetch(`${url}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${pathname} answered ${response.status}: ${text}`)
  return JSON.parse(text) as T
}

/** The stage's figures from the timings of bars received inside [windowStart, windowEnd). */
function summariseStage(strategies: number, deployed: Deployed[], timings: BarTiming[], windowStart: number, windowEnd: number) {
  const perSymbol = new Map<string, number>()
  for (const d of deployed) perSymbol.set(d.symbol, (perSymbol.get(d.symbol) ?? 0) + 1)
  // A bar is one (symbol, open time); it belongs to the window when its first receipt does.
  const bars = new Map<string, { symbol: string; first: number; last: number; count: number }>()
  for (const t of timings) {
    const key = `${t.symbol} ${t.openTime}`
    const bar = bars.get(key) ?? { symbol: t.symbol, first: t.receivedAt, last: t.committedAt, count: 0 }
    bar.first = Math.min(bar.first, t.receivedAt)
    bar.last = Math.max(bar.last, t.committedAt)
    bar.count++
    bars.set(key, bar)
  }
  const inWindow = new Set([...bars].filter(([, b]) => b.first >= windowStart && b.first < windowEnd).map(([key]) => key))
  const measured = timings.filter((t) => inWindow.has(`${t.symbol} ${t.openTime}`))
  let missing = 0
  let slowestRound = 0
  for (const key of inWindow) {
    const bar = bars.get(key)!
    missing += (perSymbol.get(bar.symbol) ?? 0) - bar.count
    slowestRound = Math.max(slowestRound, bar.last - bar.first)
  }
  const all = measured.map((t) => t.committedAt - t.receivedAt)
  const orders = measured.filter((t) => t.order).map((t) => t.committedAt - t.receivedAt)
  // Backlog growth: the bars of the window's second half against its first.
  const middle = (windowStart + windowEnd) / 2
  const firstHalf = measured.filter((t) => t.receivedAt < middle).map((t) => t.committedAt - t.receivedAt)
  const secondHalf = measured.filter((t) => t.receivedAt >= middle).map((t) => t.committedAt - t.receivedAt)
  return {
    strategies,
    bars_received: inWindow.size,
    strategy_bars: measured.length,
    strategy_bars_missing: missing,
    orders: orders.length,
    order_latency_ms: quantiles(orders),
    bar_latency_ms: quantiles(all),
    bar_latency_p99_ms_by_half: [quantiles(firstHalf).p99, quantiles(secondHalf).p99],
    slowest_bar_round_ms: round(slowestRound),
    sustained: inWindow.size > 0 && missing === 0 && slowestRound < BAR_MS,
  }
}

function quantiles(values: number[]) {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (q: number) => (sorted.length === 0 ? Number.NaN : round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!))
  return { count: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1) }
}

const round = (ms: number) => Math.round(ms * 10) / 10

/** BTCUSDT, ETHUSDT, then the first other USDT perpetuals the replay answers 1m klines for, `count` in all. */
async function minuteSymbols(replayUrl: string, count: number): Promise<string[]> {
  const info = (await (await fetch(`${replayUrl}/fapi/v1/exchangeInfo`)).json()) as { symbols: { symbol: string; status: string; quoteAsset: string; contractType: string }[] }
  const candidates = [
    'BTCUSDT',
    'ETHUSDT',
    ...info.symbols
      .filter((s) => s.status === 'TRADING' && s.quoteAsset === 'USDT' && s.contractType === 'PERPETUAL' && s.symbol !== 'BTCUSDT' && s.symbol !== 'ETHUSDT')
      .map((s) => s.symbol)
      .sort(),
  ]
  const out: string[] = []
  for (const symbol of candidates) {
    if (out.length === count) break
    const rows = (await (await fetch(`${replayUrl}/fapi/v1/klines?symbol=${symbol}&interval=1m&limit=2`)).json()) as unknown[]
    if (Array.isArray(rows) && rows.length === 2) out.push(symbol)
  }
  if (out.length < count) throw new Error(`the replay serves 1m klines for only ${out.length} symbols`)
  return out
}

/** A database of its own on the server, dropped afterwards: runs left by an earlier bench would be claimed too. */
async function freshServerDatabase(url: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `perpetua_bench_live_${process.pid}`
  const admin = new pg.Client({ connectionString: url })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const target = new URL(url)
  target.pathname = `/${name}`
  return {
    url: target.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    },
  }
}

async function waitFor(what: string, timeoutMs: number, done: () => boolean, progress: () => string): Promise<void> {
  const deadline = performance.now() + timeoutMs
  let lastLog = performance.now()
  while (!done()) {
    if (performance.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (${progress()})`)
    if (performance.now() - lastLog > 10_000) {
      log(`live: waiting for ${what}: ${progress()}`)
      lastLog = performance.now()
    }
    await sleep(100)
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
