import { type LoadRun, runLoad } from './support/load.js'
import { log } from './support/log.js'
import { startBenchReplay } from './support/replay.js'
import { ensureBuilt, startServer } from './support/server.js'
import type { SuiteOptions, SuiteResult } from './support/suite.js'

/** Goals from issue 3: cached gateway reads keep 60 % of /healthz; the active-ticker herd costs one upstream call per TTL. */
const GOAL_RATIO = 0.6
const HERD_CLIENTS = 1000
/** The all-symbols 24h ticker's cache TTL (src/market/upstream-requests.ts). */
const TICKER_TTL_S = 2
const UNLIMITED = '1000000000'

/**
 * Cached gateway reads beside GET /healthz on one server, then 1,000 concurrent clients on
 * /ticker/24hr/active, counting what reached the (standalone, countable) replay exchange.
 */
export async function run(options: SuiteOptions): Promise<SuiteResult> {
  await ensureBuilt()
  const replay = await startBenchReplay()
  const server = await startServer({ env: { UPSTREAM_URL: replay.url, RATE_LIMIT_WEIGHT_PER_MINUTE: UNLIMITED, RATE_LIMIT_IP_PER_MINUTE: UNLIMITED } })
  const runs: Record<string, LoadRun> = {}
  let herdUpstream = 0
  try {
    const load = { durationS: options.durationS, connections: options.connections, warmupS: options.warmupS }
    runs.healthz = await runLoad('healthz', { url: server.url, path: '/healthz' }, load)
    runs.funding_rates = await runLoad('funding_rates', { url: server.url, path: '/funding/rates' }, load)
    runs.exchange_info = await runLoad('exchange_info', { url: server.url, path: '/v1/market/exchange-info?symbol=BTCUSDT' }, load)
    const before = (await replay.stats()).byPath['/fapi/v1/ticker/24hr'] ?? 0
    runs.ticker_active_herd = await runLoad('ticker_active_herd', { url: server.url, path: '/ticker/24hr/active' }, { ...load, connections: HERD_CLIENTS, warmupS: 0 })
    herdUpstream = ((await replay.stats()).byPath['/fapi/v1/ticker/24hr'] ?? 0) - before
  } finally {
    await server.stop()
    replay.stop()
  }
  const healthz = runs.healthz!.summary.req_per_s
  const ratio = (run: LoadRun) => Math.round((1000 * run.summary.req_per_s) / Math.max(1, healthz)) / 1000
  const allowed = Math.ceil(options.durationS / TICKER_TTL_S) + 1
  const failures = Object.entries(runs).flatMap(([name, run]) => [
    ...(run.summary.non2xx > 0 ? [`${name}: ${run.summary.non2xx} non-2xx (${JSON.stringify(run.summary.status_codes)})`] : []),
    ...(run.summary.requests === 0 ? [`${name}: no requests completed`] : []),
  ])
  log(`ticker herd: ${herdUpstream} upstream calls in ${options.durationS} s (at most ${allowed})`)
  const report = {
    suite: 'market',
    duration_s: options.durationS,
    connections: options.connections,
    healthz: runs.healthz!.summary,
    funding_rates: { ...runs.funding_rates!.summary, ratio_to_healthz: ratio(runs.funding_rates!) },
    exchange_info_btcusdt: { ...runs.exchange_info!.summary, ratio_to_healthz: ratio(runs.exchange_info!) },
    ticker_active_herd: { clients: HERD_CLIENTS, ...runs.ticker_active_herd!.summary, upstream_requests: herdUpstream, ttl_s: TICKER_TTL_S },
    goal: {
      ratio_at_least: GOAL_RATIO,
      funding_rates_met: ratio(runs.funding_rates!) >= GOAL_RATIO,
      exchange_info_met: ratio(runs.exchange_info!) >= GOAL_RATIO,
      herd_upstream_at_most: allowed,
      herd_met: herdUpstream <= allowed,
    },
  }
  return { report, failures }
}
