import { summariseProfiles } from './support/cpu-profile.js'
import { type LoadRun, runLoad } from './support/load.js'
import { createApiKeys } from './support/keys.js'
import { log } from './support/log.js'
import { ensureBuilt, startServer } from './support/server.js'
import { RequestSigner, signedJson } from './support/signing.js'
import type { SuiteOptions, SuiteResult } from './support/suite.js'

/** The goal: a signed, authenticated, database-backed read keeps at least this share of /healthz throughput. */
const GOAL_RATIO = 0.4
// Far above anything one bench run can spend, so the budget never cuts the run (the limit's maximum is 1e9).
const UNLIMITED = '1000000000'
const EMAIL = 'bench@perpetua.test'

/**
 * The HTTP stack alone (GET /healthz) against a signed GET /v1/strategies/{id}: signature check,
 * replay guard, rate-limit charge, one strategy read. Both on the same server, one after the other.
 */
export async function run(options: SuiteOptions): Promise<SuiteResult> {
  await ensureBuilt()
  const server = await startServer({
    env: { RATE_LIMIT_WEIGHT_PER_MINUTE: UNLIMITED, RATE_LIMIT_IP_PER_MINUTE: UNLIMITED },
    cpuProfile: options.cpuProfile,
  })
  let healthz: LoadRun
  let signed: LoadRun
  try {
    // One key per connection, all for one user: strategies are owned per user, so each key can read the one strategy.
    log(`creating ${options.connections} API keys for ${EMAIL}`)
    const keys = await createApiKeys(server, EMAIL, ['strategies:read', 'strategies:write'], options.connections)
    const signers = keys.map((key) => new RequestSigner(key))
    const strategy = await signedJson<{ id: string }>(server.url, signers[0]!, 'POST', '/v1/strategies', {
      name: 'bench',
      template_id: 'sma_cross',
      params: {},
      symbols: ['BTCUSDT'],
      timeframe: '1h',
      capital: '1000',
    })
    log(`strategy ${strategy.id}`)
    const load = { durationS: options.durationS, connections: options.connections, warmupS: options.warmupS }
    healthz = await runLoad('healthz', { url: server.url, path: '/healthz' }, load)
    signed = await runLoad('signed_get_strategy', { url: server.url, path: `/v1/strategies/${strategy.id}`, signers }, load)
  } finally {
    await server.stop()
  }

  const ratio = healthz.summary.req_per_s === 0 ? 0 : Math.round((1000 * signed.summary.req_per_s) / healthz.summary.req_per_s) / 1000
  const failures: string[] = []
  for (const [name, { summary }] of Object.entries({ healthz, signed_get_strategy: signed })) {
    if (summary.non2xx > 0) failures.push(`${name}: ${summary.non2xx} non-2xx responses (${JSON.stringify(summary.status_codes)})`)
    if (summary.errors > 0) failures.push(`${name}: ${summary.errors} connection errors or timeouts`)
    if (summary.requests === 0) failures.push(`${name}: no requests completed`)
  }
  const report: Record<string, unknown> = {
    suite: 'http',
    duration_s: options.durationS,
    warmup_s: options.warmupS,
    connections: options.connections,
    healthz: healthz.summary,
    signed_get_strategy: signed.summary,
    ratio_signed_to_healthz: ratio,
    goal: { ratio_at_least: GOAL_RATIO, met: ratio >= GOAL_RATIO },
  }
  if (server.profileDir) {
    report.cpu_profile = {
      dir: server.profileDir,
      healthz: summariseProfiles(server.profileDir, healthz.window),
      signed_get_strategy: summariseProfiles(server.profileDir, signed.window),
    }
  }
  return { report, failures }
}
