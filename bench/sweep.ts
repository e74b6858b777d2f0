import { type ChildProcess, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { buildApp } from '../src/app.js'
import { ensureQueues } from '../src/work/ensure-queues.js'
import { workHandlers } from '../src/work-handlers.js'
import { loadConfig } from '../src/config.js'
import { operatorCommands } from '../src/control/commands.js'
import { startQueue } from '../src/db/queue.js'
import { createServices } from '../src/services.js'
import { openStorage } from '../src/storage.js'
import { statisticsBench } from './sweep-statistics.js'
import { createApiKeys } from './support/keys.js'
import { cpuMicros } from './support/load.js'
import { log } from './support/log.js'
import { startBenchReplay } from './support/replay.js'
import { ensureBuilt, REPO_ROOT, startServer } from './support/server.js'
import { type KeyPair, RequestSigner, signedJson } from './support/signing.js'
import type { SuiteOptions, SuiteResult } from './support/suite.js'

/** Issue 23: 1,000 configurations embedded within 10 s on this 2-core host; two worker processes ≥ 1.7× one. */
const GOAL_EMBEDDED_MS = 10_000
const GOAL_SCALE = 1.7
const SHARED_DATA = [path.resolve(REPO_ROOT, '..', 'shared', 'data'), path.resolve(REPO_ROOT, '..', '..', 'shared', 'data')].find((dir) =>
  fs.existsSync(path.join(dir, 'binance-um-futures')),
)
const BASE = { template_id: 'sma_cross', symbols: ['BTCUSDT'], timeframe: '1h', start: '2020-06-01T00:00:00Z', end: '2025-06-01T00:00:00Z', capital: '10000' }
/** 10 × 100 = 1,000 configurations, every one valid (fast < slow). */
const SWEEP = {
  base: BASE,
  grid: { fast: Array.from({ length: 10 }, (_, i) => 5 + 5 * i), slow: Array.from({ length: 100 }, (_, i) => 55 + 5 * i) },
}
/** Stores the history and warms each process's engine (its JIT) before a measured sweep: 100 configurations. */
const WARM = { base: BASE, grid: { fast: Array.from({ length: 10 }, (_, i) => 5 + 5 * i), slow: Array.from({ length: 10 }, (_, i) => 600 + 10 * i) } }

interface SweepView {
  id: string
  status: string
  progress: number
  error: { code: string; message: string } | null
  submitted_at: string
  finished_at: string | null
  config: { configurations: number }
}

interface Timed {
  status: string
  error: string | null
  configurations: number
  /** POST sent to every run stored (progress 1, read from the list every 50 ms). */
  runs_ms: number
  /** POST sent to the sweep ended (its statistics included). */
  post_to_end_ms: number
  /** CPU of the measured processes (every thread) from POST to end, per configuration. */
  cpu_ms_per_configuration: number
  /** That CPU over the wall time from POST to end: the cores the measured processes got (2 at most here; less when other processes share the host). */
  cores_used: number
  /** CPU of this host's PostgreSQL server processes (every backend) meanwhile, per configuration; null when embedded. */
  postgres_server_cpu_ms_per_configuration?: number
}

/**
 * `npm run bench -- sweep`: a 1,000-configuration sma_cross sweep over BTCUSDT 1h 2020-06-01..2025-06-01 (the issue's
 * 2020-01-01 start is past a backtest's 5-year span, which a sweep's base keeps)
 * (≈ 44 k bars each), with the history stored and every process warmed beforehand (a 100-configuration sweep). Embedded: one
 * `perpetua serve` (WORKERS=2, this host's cores). With BENCH_DATABASE_URL: the API in this process
 * (no workers) on a fresh database, and the sweep run by one, then two `perpetua worker` processes (WORKERS=1 each).
 */
export async function run(_options: SuiteOptions): Promise<SuiteResult> {
  await ensureBuilt()
  if (!SHARED_DATA) throw new Error(`no shared/data/binance-um-futures beside ${REPO_ROOT}`)
  const replay = await startBenchReplay(['--data', SHARED_DATA, '--start', '2026-05-17T00:00:00Z'])
  const failures: string[] = []
  try {
    const embedded = await measureEmbedded(replay.url)
    if (embedded.status !== 'done') failures.push(`the embedded sweep ended ${embedded.status}: ${embedded.error}`)
    if (embedded.runs_ms > GOAL_EMBEDDED_MS) log(`embedded: ${embedded.runs_ms} ms to run 1,000 configurations, over the ${GOAL_EMBEDDED_MS} ms goal`)
    const statistics = statisticsBench()
    failures.push(...statistics.failures)
    const adminUrl = process.env.BENCH_DATABASE_URL
    const postgres = adminUrl ? await measureWorkers(adminUrl, replay.url) : undefined
    for (const timed of postgres ? [postgres.one_worker, postgres.two_workers] : []) if (timed.status !== 'done') failures.push(`a PostgreSQL sweep ended ${timed.status}: ${timed.error}`)
    if (postgres && postgres.speedup < GOAL_SCALE) log(`two workers ran ${postgres.speedup}× faster than one, under the ${GOAL_SCALE}× goal`)
    return {
      report: {
        suite: 'sweep',
        sweep: { template: 'sma_cross', configurations: 1000, ...BASE },
        embedded: { ...embedded, goal_ms: GOAL_EMBEDDED_MS, workers: 2 },
        postgres: postgres ?? 'not measured: set BENCH_DATABASE_URL (a PostgreSQL server admin URL)',
        // The statistics alone (bench/sweep-statistics.ts: N = 1,000, T ≈ 2,000, S = 16, and walk-forwards).
        ...statistics.report,
        host: { cores: os.availableParallelism(), node: process.version, load_average: os.loadavg().map((x) => Math.round(x * 100) / 100) },
      },
      failures,
    }
  } finally {
    replay.stop()
  }
}

async function measureEmbedded(upstreamUrl: string): Promise<Timed> {
  const server = await startServer({ env: { UPSTREAM_URL: upstreamUrl, RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000000', RATE_LIMIT_IP_PER_MINUTE: '1000000000', WORKERS: '2' } })
  try {
    const [key] = await createApiKeys(server, 'bench-sweep@perpetua.test', ['backtests:read', 'backtests:write'], 1)
    const signer = new RequestSigner(key!)
    await timeSweep(server.url, signer, WARM, [server.pid])
    return await timeSweep(server.url, signer, SWEEP, [server.pid])
  } finally {
    await server.stop()
  }
}

async function measureWorkers(adminUrl: string, upstreamUrl: string) {
  const database = await freshDatabase(adminUrl)
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-sweep-'))
  const env = { DATABASE_URL: database.url, UPSTREAM_URL: upstreamUrl, RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000000', RATE_LIMIT_IP_PER_MINUTE: '1000000000' }
  const config = loadConfig({ ...process.env, ...env, DATA_DIR: dataDir, LOG_LEVEL: 'warn' })
  const storage = await openStorage(config, 'bench')
  const boss = await startQueue(storage.database, (error) => log(`queue error: ${String(error)}`))
  await ensureQueues(boss, workHandlers())
  const services = createServices(config, storage.database, Date.now, boss)
  const app = await buildApp(services)
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  const workers: ChildProcess[] = []
  try {
    const key = (await operatorCommands(services)['keys.create']!({ email: 'bench-sweep@perpetua.test', scopes: 'backtests:read,backtests:write' })) as KeyPair
    const signer = new RequestSigner(key)
    workers.push(await startWorker(env))
    await timeSweep(url, signer, WARM, [])
    const one = await timeSweep(url, signer, SWEEP, workers.map((w) => w.pid!), postgresPids)
    workers.push(await startWorker(env))
    await timeSweep(url, signer, WARM, []) // the new worker's engine warmed as the first one's was
    const two = await timeSweep(url, signer, SWEEP, workers.map((w) => w.pid!), postgresPids)
    return { one_worker: one, two_workers: two, speedup: Math.round((one.runs_ms / two.runs_ms) * 100) / 100, goal_speedup: GOAL_SCALE }
  } finally {
    for (const worker of workers) worker.kill('SIGTERM')
    await Promise.all(workers.map((worker) => new Promise((resolve) => (worker.exitCode === null ? worker.once('exit', resolve) : resolve(undefined)))))
    await app.close()
    await services.webhooks.close()
    await services.sandbox.close()
    await services.market.close()
    await boss.stop({ graceful: false, timeout: 2000 })
    await storage.close()
    await database.drop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

/** POST, then the list every 50 ms (not subject to the per-sweep polling limit) until the sweep ends. */
async function timeSweep(url: string, signer: RequestSigner, body: object, pids: number[], serverPids: () => number[] = () => []): Promise<Timed> {
  const cpu = () => pids.reduce((sum, pid) => sum + cpuMicros(pid), 0)
  const serverCpu = () => serverPids().reduce((sum, pid) => sum + cpuOrZero(pid), 0)
  const cpuBefore = cpu()
  const serverCpuBefore = serverCpu()
  const started = performance.now()
  const { id } = await signedJson<SweepView>(url, signer, 'POST', '/v1/backtest/sweeps', body)
  let runsMs: number | undefined
  for (;;) {
    const page = await signedJson<{ data: SweepView[] }>(url, signer, 'GET', '/v1/backtest/sweeps?limit=1')
    const sweep = page.data.find((s) => s.id === id)
    if (sweep && runsMs === undefined && (sweep.progress === 1 || !['queued', 'running'].includes(sweep.status))) runsMs = Math.round(performance.now() - started)
    if (sweep && !['queued', 'running'].includes(sweep.status)) {
      const ms = Math.round(performance.now() - started)
      const configurations = sweep.config.configurations
      const cpuMs = (cpu() - cpuBefore) / 1000
      const serverCpuMs = (serverCpu() - serverCpuBefore) / 1000
      log(`sweep ${id} (${configurations} configurations): ${sweep.status} after ${ms} ms, every run stored after ${runsMs} ms${sweep.error ? ` (${sweep.error.code})` : ''}`)
      return {
        status: sweep.status,
        error: sweep.error ? `${sweep.error.code}: ${sweep.error.message}` : null,
        configurations,
        runs_ms: runsMs!,
        post_to_end_ms: ms,
        cpu_ms_per_configuration: Math.round((cpuMs / configurations) * 100) / 100,
        cores_used: Math.round((cpuMs / ms) * 100) / 100,
        ...(serverPids().length > 0 ? { postgres_server_cpu_ms_per_configuration: Math.round((serverCpuMs / configurations) * 100) / 100 } : {}),
      }
    }
    if (performance.now() - started > 10 * 60_000) throw new Error(`sweep ${id} did not end in 10 minutes`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** The processes of a PostgreSQL server on this host (user postgres), read from /proc; empty when it runs elsewhere. */
function postgresPids(): number[] {
  return fs
    .readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'postgres'
      } catch {
        return false
      }
    })
    .map(Number)
}

/** cpuMicros of a process that may have ended (a PostgreSQL backend of a closed connection): 0 then. */
function cpuOrZero(pid: number): number {
  try {
    return cpuMicros(pid)
  } catch {
    return 0
  }
}

async function startWorker(env: Record<string, string>): Promise<ChildProcess> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-sweep-worker-'))
  const child = spawn(process.execPath, [path.join(REPO_ROOT, 'dist', 'cli.js'), 'worker'], {
    cwd: REPO_ROOT,
    env: { ...process.env, METRICS_ADDR: 'off', ...env, DATA_DIR: dataDir, WORKERS: '1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  await new Promise<void>((resolve, reject) => {
    let seen = ''
    child.stdout!.on('data', (chunk: Buffer) => {
      seen += chunk.toString()
      if (seen.includes('perpetua worker is running backtests')) resolve()
    })
    child.once('exit', (code) => reject(new Error(`perpetua worker exited with ${code}`)))
  })
  child.stdout!.resume()
  log(`worker pid ${child.pid} started`)
  return child
}

async function freshDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `perpetua_bench_sweep_${process.pid}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const target = new URL(adminUrl)
  target.pathname = `/${name}`
  return {
    url: target.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: adminUrl })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    },
  }
}
