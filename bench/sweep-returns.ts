import http from 'node:http'
import os from 'node:os'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { seedDoneSweep } from '../test/support/big-sweep.js'
import { startTestApp, type TestApp } from '../test/support/app.js'
import { signedHeaders, type KeyPair } from '../test/support/signing.js'
import { watchServer } from '../test/support/server-watch.js'
import { log } from './support/log.js'
import type { SuiteResult } from './support/suite.js'

/** Issue 37: a 10,000-configuration sweep over 1,826 daily returns. */
const RUNS = 10_000
const POINTS = 1827
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 10)
const SWEEP = 'sw_0000b137'

const mb = (bytes: number) => Math.round(bytes / 1e5) / 10

/**
 * `npm run bench -- sweep-returns`: GET …/returns of a 10,000 × 1,826 sweep (seeded through the sweep's
 * own store) on an embedded server: one call's peak RSS growth, the event loop's longest stall and the
 * slowest /healthz meanwhile; then CONCURRENT calls at once. A call is the whole matrix where the server
 * answers it in one request (before issue 37), else one page of the most columns a request may ask.
 */
export async function run(): Promise<SuiteResult> {
  const t = await startTestApp('pglite', {}, { config: { weightPerMinute: 1e9 } })
  try {
    const key = await t.createKey(['backtests:read'], 'bench-returns@example.test')
    const user = await t.database.handle.db.selectFrom('users').select('id').where('email', '=', 'bench-returns@example.test').executeTakeFirstOrThrow()
    log(`seeding ${RUNS} × ${POINTS - 1}`)
    await seedDoneSweep(t.database.handle.db, user.id, SWEEP, RUNS, POINTS)
    const address = await t.app.listen({ host: '127.0.0.1', port: 0 })
    const whole = `/v1/backtest/sweeps/${SWEEP}/returns`
    const path = (await get(t, key, address, whole)).status === 200 ? whole : `${whole}?limit=1000`
    log(`measuring ${path}`)
    const one = await measure(t, key, address, path, 1)
    const many = await measure(t, key, address, path, CONCURRENT)
    return { report: { path, runs: RUNS, days: POINTS - 1, one, concurrent: many, load_average: os.loadavg() }, failures: [...one.failures, ...many.failures] }
  } finally {
    await t.close()
  }
}

async function measure(t: TestApp, key: KeyPair, address: string, path: string, calls: number) {
  global.gc?.()
  const baseline = process.memoryUsage().rss
  const delay = monitorEventLoopDelay({ resolution: 10 })
  delay.enable()
  const watch = watchServer(address)
  const started = performance.now()
  const answers = await Promise.all(Array.from({ length: calls }, () => get(t, key, address, path)))
  const ms = performance.now() - started
  const watched = await watch.stop()
  delay.disable()
  const failures = answers.filter((a) => a.status !== 200).map((a) => `a call answered ${a.status}`)
  const report = {
    calls,
    wall_ms: Math.round(ms),
    bytes_per_call: answers[0]!.bytes,
    rss_growth_mb: mb(watched.peakRss - baseline),
    rss_growth_per_call_mb: mb((watched.peakRss - baseline) / calls),
    event_loop_max_stall_ms: Math.round(delay.max / 1e6),
    healthz_max_ms: Math.round(watched.healthzMaxMs),
  }
  log(JSON.stringify(report))
  return { ...report, failures }
}

/** One GET over real HTTP, its body counted and dropped as it arrives. */
function get(t: TestApp, key: KeyPair | undefined, address: string, path: string): Promise<{ status: number; bytes: number }> {
  t.clock.advance(1)
  const headers = key ? signedHeaders(key, 'GET', path, '', t.clock.now()) : {}
  return new Promise((resolve, reject) => {
    http
      .get(`${address}${path}`, { headers }, (response) => {
        let bytes = 0
        response.on('data', (chunk: Buffer) => (bytes += chunk.length))
        response.on('end', () => resolve({ status: response.statusCode!, bytes }))
        response.on('error', reject)
      })
      .on('error', reject)
  })
}
