import { summariseProfiles } from './support/cpu-profile.js'
import { type Paired, againstCeiling, atLeast, startCeiling, withRatio } from './support/ceiling.js'
import { type LoadRun, runLoad } from './support/load.js'
import { log } from './support/log.js'
import { startBenchReplay } from './support/replay.js'
import { ensureBuilt, startServer } from './support/server.js'
import type { SuiteOptions, SuiteResult } from './support/suite.js'

/**
 * Goals: cached gateway reads keep 75 % of a bare Fastify hello-world's throughput, /healthz 90 %
 * (issue 13); the active-ticker herd costs one upstream call per TTL (issue 3).
 */
const GOAL_CACHED_READ = 0.75
const GOAL_HEALTHZ = 0.9
const HERD_CLIENTS = 1000
/** The all-symbols 24h ticker's cache TTL (src/market/upstream-requests.ts). */
const TICKER_TTL_S = 2
const UNLIMITED = '1000000000'
/** GET /healthz and the cached reads of issue 13, each loaded right after the bare server. */
const CACHED_READS = {
  healthz: '/healthz',
  funding_rates: '/funding/rates',
  exchange_info_btcusdt: '/v1/market/exchange-info?symbol=BTCUSDT',
  ticker_24hr: '/fapi/v1/ticker/24hr',
}

/**
 * Cached gateway reads and GET /healthz on one server, each right after a bare Fastify process's run, then 1,000 concurrent clients on
 * /ticker/24hr/active, counting what reached the (standalone, countable) replay exchange.
 */
export async function run(options: SuiteOptions): Promise<SuiteResult> {
  await ensureBuilt()
  const load = { durationS: options.durationS, connections: options.connections, warmupS: options.warmupS }
  const ceiling = await startCeiling()
  const replay = await startBenchReplay()
  const server = await startServer({ env: { UPSTREAM_URL: replay.url, RATE_LIMIT_WEIGHT_PER_MINUTE: UNLIMITED, RATE_LIMIT_IP_PER_MINUTE: UNLIMITED }, cpuProfile: options.cpuProfile })
  const pairs: Record<string, Paired> = {}
  const runs: Record<string, LoadRun> = {}
  let herdUpstream = 0
  try {
    for (const [name, path] of Object.entries(CACHED_READS)) {
      pairs[name] = await againstCeiling(ceiling, name, { url: server.url, path, pid: server.pid }, load)
      runs[name] = pairs[name]!.run
      runs[`bare_before_${name}`] = pairs[name]!.bare
    }
    const before = (await replay.stats()).byPath['/fapi/v1/ticker/24hr'] ?? 0
    runs.ticker_active_herd = await runLoad('ticker_active_herd', { url: server.url, path: '/ticker/24hr/active' }, { ...load, connections: HERD_CLIENTS, warmupS: 0 })
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
  const { healthz, ...cached } = pairs
  const report = {
    suite: 'market',
    duration_s: options.durationS,
    connections: options.connections,
    healthz: withRatio(healthz!),
    ...Object.fromEntries(Object.entries(cached).map(([name, pair]) => [name, withRatio(pair)])),
    ticker_active_herd: { clients: HERD_CLIENTS, ...runs.ticker_active_herd!.summary, upstream_requests: herdUpstream, ttl_s: TICKER_TTL_S },
    goal: {
      healthz_to_bare: atLeast(healthz!.ratio, GOAL_HEALTHZ),
      ...Object.fromEntries(Object.entries(cached).map(([name, pair]) => [`${name}_to_bare`, atLeast(pair.ratio, GOAL_CACHED_READ)])),
      herd_upstream: { value: herdUpstream, at_most: allowed, met: herdUpstream <= allowed },
    },
  }
  if (server.profileDir) {
    const dir = server.profileDir
    ;(report as Record<string, unknown>).cpu_profile = { dir, windows_us: Object.fromEntries(Object.entries(runs).map(([name, run]) => [name, run.window])), ...Object.fromEntries(Object.entries(runs).map(([name, run]) => [name, summariseProfiles(dir, run.window)])) }
  }
  return { report, failures }
}
