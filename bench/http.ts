import { summariseProfiles } from './support/cpu-profile.js'
import { type Ceiling, type Paired, againstSameBytes, atLeast, medianRound, runsOf, startCeiling, withRatio } from './support/ceiling.js'
import { cpuMicros, type LoadOptions, threadCpuMicros } from './support/load.js'
import { createApiKeys } from './support/keys.js'
import { loadAverage, log } from './support/log.js'
import { createServerDatabase, dropServerDatabase } from '../test/support/database.js'
import { ensureBuilt, startServer } from './support/server.js'
import { RequestSigner, signedJson } from './support/signing.js'
import type { SuiteOptions, SuiteResult } from './support/suite.js'

/** Goals from issues 13 and 36: bare Fastify's server CPU per request for the same bytes ÷ ours. */
const GOAL_HEALTHZ = 0.9
const GOAL_SIGNED = 0.5
// Far above anything one bench run can spend, so the budget never cuts the run (the limit's maximum is 1e9).
const UNLIMITED = '1000000000'
const EMAIL = 'bench@perpetua.test'

/**
 * On the embedded server, each against a bare Fastify process answering the same bytes, round after round:
 * the HTTP stack alone (GET /healthz) and a signed GET /v1/strategies/{id}: signature check, replay guard,
 * rate-limit charge, one strategy read. With BENCH_DATABASE_URL (a PostgreSQL server's admin URL) both run
 * again on a server of its own on a fresh database there.
 */
export async function run(options: SuiteOptions): Promise<SuiteResult> {
  await ensureBuilt()
  const loadBefore = loadAverage()
  const load = { durationS: options.durationS, connections: options.connections, warmupS: options.warmupS, rate: options.rate }
  const ceiling = await startCeiling()
  let embedded: Measured
  let server: Measured | undefined
  try {
    embedded = await measureServer('embedded', undefined, ceiling, options, load)
    const adminUrl = process.env.BENCH_DATABASE_URL
    server = adminUrl ? await measureOnPostgres(adminUrl, ceiling, options, load) : undefined
  } finally {
    await ceiling.stop()
  }

  const failures: string[] = []
  const pairs = { ...prefixed('embedded', embedded.runs), ...(server ? prefixed('postgres', server.runs) : {}) }
  const runs = Object.fromEntries(Object.entries(pairs).flatMap(([name, pair]) => Object.entries(runsOf(name, pair))))
  for (const [name, { summary }] of Object.entries(runs)) {
    if (summary.non2xx > 0) failures.push(`${name}: ${summary.non2xx} non-2xx responses (${JSON.stringify(summary.status_codes)})`)
    if (summary.errors > 0) failures.push(`${name}: ${summary.errors} connection errors or timeouts`)
    if (summary.requests === 0) failures.push(`${name}: no requests completed`)
  }
  const report: Record<string, unknown> = {
    suite: 'http',
    // 1-minute load average of the (shared) host at the start and end: figures drift with it, ratios less.
    load_average_1m: { start: loadBefore, end: loadAverage() },
    duration_s: options.durationS,
    warmup_s: options.warmupS,
    connections: options.connections,
    rounds: options.rounds,
    measure: 'server CPU per request, whole process, bare Fastify answering the same bytes ÷ ours; median of the rounds',
    idle_server: { embedded: embedded.idle, ...(server ? { postgres: server.idle } : {}) },
    healthz: { ...withRatio(embedded.runs.healthz), goal: atLeast(embedded.runs.healthz.cpu_ratio.median, GOAL_HEALTHZ) },
    signed_get_strategy: { ...withRatio(embedded.runs.signed), goal: atLeast(embedded.runs.signed.cpu_ratio.median, GOAL_SIGNED) },
    ...(server
      ? {
          postgres: {
            healthz: { ...withRatio(server.runs.healthz), goal: atLeast(server.runs.healthz.cpu_ratio.median, GOAL_HEALTHZ) },
            signed_get_strategy: { ...withRatio(server.runs.signed), goal: atLeast(server.runs.signed.cpu_ratio.median, GOAL_SIGNED) },
          },
        }
      : {}),
    goal: {
      healthz_to_bare: atLeast(embedded.runs.healthz.cpu_ratio.median, GOAL_HEALTHZ),
      signed_get_strategy_to_bare: atLeast(embedded.runs.signed.cpu_ratio.median, GOAL_SIGNED),
      ...(server
        ? { postgres_signed_get_strategy_to_bare: atLeast(server.runs.signed.cpu_ratio.median, GOAL_SIGNED) }
        : { postgres_signed_get_strategy_to_bare: 'not measured: set BENCH_DATABASE_URL' }),
    },
  }
  const profiles = [embedded, server].filter((m) => m?.profile !== undefined).map((m) => m!.profile)
  if (profiles.length > 0) report.cpu_profile = profiles
  return { report, failures }
}

interface Measured {
  runs: { healthz: Paired; signed: Paired }
  idle: Idle
  profile?: Record<string, unknown>
}

async function measureOnPostgres(adminUrl: string, ceiling: Ceiling, options: SuiteOptions, load: LoadOptions): Promise<Measured> {
  const url = await createServerDatabase(adminUrl)
  try {
    return await measureServer('postgres', url, ceiling, options, load)
  } finally {
    await dropServerDatabase(url, adminUrl)
  }
}

async function measureServer(label: string, databaseUrl: string | undefined, ceiling: Ceiling, options: SuiteOptions, load: LoadOptions): Promise<Measured> {
  const server = await startServer({
    env: { RATE_LIMIT_WEIGHT_PER_MINUTE: UNLIMITED, RATE_LIMIT_IP_PER_MINUTE: UNLIMITED, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) },
    cpuProfile: options.cpuProfile,
  })
  let runs: Measured['runs']
  let idle: Idle
  try {
    // One key per connection, all for one user: strategies are owned per user, so each key can read the one strategy.
    log(`${label}: creating ${options.connections} API keys for ${EMAIL}`)
    const keys = await createApiKeys(server, EMAIL, ['strategies:read', 'strategies:write'], options.connections, databaseUrl)
    const signers = keys.map((key) => new RequestSigner(key))
    const strategy = await signedJson<{ id: string }>(server.url, signers[0]!, 'POST', '/v1/strategies', {
      name: 'bench',
      template_id: 'sma_cross',
      params: {},
      symbols: ['BTCUSDT'],
      timeframe: '1h',
      capital: '1000',
    })
    log(`${label}: strategy ${strategy.id}`)
    idle = await idleCpu(server.pid, options.durationS)
    log(`${label}: idle, the server used ${idle.cpu_ms_per_s} ms of CPU a second (${JSON.stringify(idle.by_thread)})`)
    const healthz = await againstSameBytes(ceiling, `${label}_healthz`, { url: server.url, path: '/healthz', pid: server.pid }, load, options.rounds)
    const signed = await againstSameBytes(ceiling, `${label}_signed_get_strategy`, { url: server.url, path: `/v1/strategies/${strategy.id}`, signers, pid: server.pid }, load, options.rounds)
    runs = { healthz, signed }
  } finally {
    await server.stop() // the server writes its CPU profile as it exits
  }
  if (!server.profileDir) return { runs, idle }
  const profile = {
    database: label,
    dir: server.profileDir,
    // The median round's window stands for the route.
    windows_us: { healthz: medianRound(runs.healthz).run.window, signed_get_strategy: medianRound(runs.signed).run.window },
    healthz: summariseProfiles(server.profileDir, medianRound(runs.healthz).run.window),
    signed_get_strategy: summariseProfiles(server.profileDir, medianRound(runs.signed).run.window),
  }
  return { runs, idle, profile }
}

/** What the server spends with no request coming: its timers and pollers, which every request's share of the CPU carries. */
interface Idle {
  cpu_ms_per_s: number
  by_thread: Record<string, number>
}

async function idleCpu(pid: number, seconds: number): Promise<Idle> {
  const before = threadCpuMicros(pid)
  const total = cpuMicros(pid)
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  const perS = (us: number) => Math.round(us / seconds / 100) / 10
  const after = threadCpuMicros(pid)
  return {
    cpu_ms_per_s: perS(cpuMicros(pid) - total),
    by_thread: Object.fromEntries([...after].map(([name, us]) => [name, perS(us - (before.get(name) ?? 0))] as const).filter(([, ms]) => ms > 0)),
  }
}

function prefixed(prefix: string, runs: Record<string, Paired>): Record<string, Paired> {
  return Object.fromEntries(Object.entries(runs).map(([name, run]) => [`${prefix}_${name}`, run]))
}
