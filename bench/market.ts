import { summariseProfiles } from './support/cpu-profile.js'
import { type Paired, againstSameBytes, atLeast, medianRound, runsOf, startCeiling, withRatio } from './support/ceiling.js'
import { type LoadRun, runLoad } from './support/load.js'
import { loadAverage, log } from './support/log.js'
import { startBenchReplay } from './support/replay.js'
import { ensureBuilt, startServer } from './support/server.js'
import type { SuiteOptions, SuiteResult } from './support/suite.js'

/**
 * Goals, as bare Fastify's server CPU per request for the same bytes ÷ ours (issue 36): /healthz, the funding
 * rates and one symbol's exchange info 0.9, the forwarded 24h ticker 0.75 (issue 13's goal for cached reads);
 * the active-ticker herd costs one upstream call per TTL (issue 3).
 */
const GOALS: Record<keyof typeof CACHED_READS, number> = { healthz: 0.9, funding_rates: 0.9, exchange_info_btcusdt: 0.9, ticker_24hr: 0.75 }
const HERD_CLIENTS = 1000
/** The all-symbols 24h ticker's cache TTL (src/market/upstream-requests.ts). */
const TICKER_TTL_S = 2
const UNLIMITED = '1000000000'
/** GET /healthz and the cached reads of issue 13, each against the bare server answering the same bytes. */
const CACHED_READS = {
  healthz: '/healthz',
  funding_rates: '/funding/rates',
  exchange_info_btcusdt: '/v1/market/exchange-info?symbol=BTCUSDT',
  ticker_24hr: '/fapi/v1/ticker/24hr',
}

/**
 * Cached gateway reads and GET /healthz on one server, each against a bare Fastify process answering the same
 * bytes round after round, then 1,000 concurrent clients on /ticker/24hr/active, counting what reached the
 * (standalone, countable) replay exchange.
 */
export async function run(options: SuiteOptions): Promise<SuiteResult> {
  await ensureBuilt()
  const loadBefore = loadAverage()
  const load = { durationS: options.durationS, connections: options.connections, warmupS: options.warmupS, rate: options.rate }
  const ceiling = await startCeiling()
  const replay = await startBenchReplay()
  const server = await startServer({ env: { UPSTREAM_URL: replay.url, RATE_LIMIT_WEIGHT_PER_MINUTE: UNLIMITED, RATE_LIMIT_IP_PER_MINUTE: UNLIMITED }, cpuProfile: options.cpuProfile })
  const pairs = {} as Record<keyof typeof CACHED_READS, Paired>
  const runs: Record<string, LoadRun> = {}
  let herdUpstream = 0
  try {
    for (const [name, route] of Object.entries(CACHED_READS) as [keyof typeof CACHED_READS, string][]) {
      pairs[name] = await againstSameBytes(ceiling, name, { url: server.url, path: route, pid: server.pid }, load, options.rounds)
      Object.assign(runs, runsOf(name, pairs[name]))
    }
    const before = (await replay.stats()).byPath['/fapi/v1/ticker/24hr'] ?? 0
    runs.ticker_active_herd = await runLoad('ticker_active_herd', { url: server.url, path: '/ticker/24hr/active' }, { ...load, connections: HERD_CLIENTS, warmupS: 0, rate: undefined })
    herdUpstream = ((await replay.stats()).byPath['/fapi/v1/ticker/24hr'] ?? 0) - before
  } finally {
    await server.stop()
    replay.stop()
    await ceiling.stop()
  }
  const allowed = Math.ceil(options.durationS / TICKER_TTL_S) + 1
  const failures = Object.entries(runs).flatMap(([name, run]) => [
    ...(run.summary.non2xx > 0 ? [`${name}: ${run.summary.non2xx} non-2xx (${JSON.stringify(run.summary.status_codes)})`] : []),
    ...(run.summary.requests === 0 ? [`${name}: no requests completed`] : []),
  ])
  log(`ticker herd: ${herdUpstream} upstream calls in ${options.durationS} s (at most ${allowed})`)
  const goal = (name: keyof typeof CACHED_READS) => atLeast(pairs[name].cpu_ratio.median, GOALS[name])
  const names = Object.keys(CACHED_READS) as (keyof typeof CACHED_READS)[]
  const report = {
    suite: 'market',
    // 1-minute load average of the (shared) host at the start and end: figures drift with it, ratios less.
    load_average_1m: { start: loadBefore, end: loadAverage() },
    duration_s: options.durationS,
    connections: options.connections,
    rounds: options.rounds,
    measure: 'server CPU per request, whole process, bare Fastify answering the same bytes ÷ ours; median of the rounds',
    ...Object.fromEntries(names.map((name) => [name, { ...withRatio(pairs[name]), goal: goal(name) }])),
    ticker_active_herd: { clients: HERD_CLIENTS, ...runs.ticker_active_herd!.summary, upstream_requests: herdUpstream, ttl_s: TICKER_TTL_S },
    goal: {
      ...Object.fromEntries(names.map((name) => [`${name}_to_bare`, goal(name)])),
      herd_upstream: { value: herdUpstream, at_most: allowed, met: herdUpstream <= allowed },
    },
  }
  if (server.profileDir) {
    const dir = server.profileDir
    // Each route's median round stands for it.
    const windows = Object.fromEntries(names.map((name) => [name, medianRound(pairs[name]).run.window]))
    ;(report as Record<string, unknown>).cpu_profile = { dir, windows_us: windows, ...Object.fromEntries(Object.entries(windows).map(([name, window]) => [name, summariseProfiles(dir, window)])) }
  }
  return { report, failures }
}
