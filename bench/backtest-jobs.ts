import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type ProfileSummary, summariseProfiles } from './support/cpu-profile.js'
import { createApiKeys } from './support/keys.js'
import { cpuMicros, monotonicUs } from './support/load.js'
import { log } from './support/log.js'
import { type ReplayStats, replayStats, startBenchReplay } from './support/replay.js'
import { type BenchServer, REPO_ROOT, startServer } from './support/server.js'
import { RequestSigner, signedJson } from './support/signing.js'

/** Stored-history runs on the warm server; the median is held against the goal. */
const STORED_RUNS = 7
/** The shared data folder beside the checkout: ../shared for the main checkout, ../../shared for a worktree under wt/. */
export const SHARED_DATA = [path.resolve(REPO_ROOT, '..', 'shared', 'data'), path.resolve(REPO_ROOT, '..', '..', 'shared', 'data')].find((dir) =>
  fs.existsSync(path.join(dir, 'binance-um-futures')),
)
const JOB = {
  template_id: 'sma_cross',
  params: { fast: 10, slow: 30 },
  symbols: ['BTCUSDT'],
  timeframe: '5m',
  start: '2023-01-01T00:00:00Z',
  end: '2026-02-19T23:55:00Z',
  capital: '10000',
}

export interface JobView {
  id: string
  status: string
  error: unknown
  submitted_at: string
  finished_at: string | null
  result: { metrics: { total_trades: number } } | null
}

export interface Timed {
  /** POST sent to the list first showing the job terminal (the list is read every 20 ms). */
  ms: number
  /** finished_at − submitted_at as the server recorded them (no polling granularity). */
  server_ms: number | null
  /** CPU time of the whole server process (every thread) from POST to done. */
  server_cpu_ms: number
  job: JobView
}

/**
 * POST to done for BTCUSDT 5m over 2023-01-01..2026-02-19 (330k bars, 5,683 trades), through the whole
 * service: signed request, queue, history store, engine thread, result stored. First with a cold store
 * (the replay exchange over shared/data serves whole months and days of klines from its archive layout,
 * generating each file on its first request, and the rest of the klines and the funding over REST), then
 * STORED_RUNS times with the history stored, then once more after a restart on the same DATA_DIR
 * (history in the database, nothing in the new process's memory).
 */
export interface JobsReport {
  job: typeof JOB
  cold_store: {
    post_to_done_ms: number
    server_ms: number | null
    status: string
    trades: number | null
    /** REST requests (klines, funding, time, exchangeInfo). */
    upstream_requests: number
    /** Archive zips downloaded (each with its .CHECKSUM). */
    archive_files: number
    /** Issue 25's starting point: REST alone (225 requests). */
    rest_only_baseline_ms: number
  }
  stored: {
    runs: number
    /** The median of the runs: what the goal holds. */
    post_to_done_ms: number
    post_to_done_ms_each: number[]
    server_ms_median: number
    server_cpu_ms_median: number
    /** "done" when every run was. */
    status: string
    trades: number | null
    upstream_requests: number
  }
  stored_after_restart: { post_to_done_ms: number; server_ms: number | null; server_cpu_ms: number; status: string }
  /**
   * A cold store again (a fresh DATA_DIR) once the replay exchange has made its archive files: what the
   * job costs where the archive is a static file host, as Binance's is.
   */
  cold_store_archive_files_made: { post_to_done_ms: number; server_ms: number | null; server_cpu_ms: number; status: string; upstream_requests: number; archive_files: number }
  load_average: number[]
  cpu_profile_stored_runs?: ProfileSummary[]
}

export async function measureJobs(options: { cpuProfile: boolean }): Promise<JobsReport> {
  if (!SHARED_DATA) throw new Error(`no shared/data/binance-um-futures beside ${REPO_ROOT} (the 5m series is not in the repository's data/)`)
  // Its clock after the 5m series ends, so the whole range is history.
  const replay = await startBenchReplay(['--data', SHARED_DATA, '--start', '2026-05-17T00:00:00Z'])
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-jobs-'))
  const env = { UPSTREAM_URL: replay.url, UPSTREAM_ARCHIVE_URL: replay.url, RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000000', RATE_LIMIT_IP_PER_MINUTE: '1000000000', WORKERS: '1' }
  let server: BenchServer | undefined
  try {
    server = await startServer({ env, dataDir, cpuProfile: options.cpuProfile })
    const [key] = await createApiKeys(server, 'bench-jobs@perpetua.test', ['backtests:read', 'backtests:write'], 1)
    const signer = new RequestSigner(key!)
    const cold = await timeJob(server, signer)
    const coldStats = await replay.stats()
    const upstreamCalls = coldStats.requests
    const stored: Timed[] = []
    const startUs = monotonicUs()
    for (let k = 0; k < STORED_RUNS; k++) stored.push(await timeJob(server, signer))
    const endUs = monotonicUs()
    const upstreamCallsAfter = (await replay.stats()).requests
    // --cpu-prof writes its profiles when the process exits.
    await server.stop()
    const profiles: ProfileSummary[] | undefined = server.profileDir ? summariseProfiles(server.profileDir, { startUs, endUs }, 25) : undefined
    server = await startServer({ env, dataDir })
    const fresh = await timeJob(server, signer)
    await server.stop()
    const coldAgain = await coldStoreAgain(env, await replay.stats())
    const ms = median(stored.map((run) => run.ms))
    const allDone = stored.every((run) => run.job.status === 'done')
    return {
      job: JOB,
      cold_store: { post_to_done_ms: cold.ms, server_ms: cold.server_ms, status: cold.job.status, trades: cold.job.result?.metrics.total_trades ?? null,
        upstream_requests: upstreamCalls,
        archive_files: coldStats.archiveFiles,
        rest_only_baseline_ms: 40_400,
      },
      stored: {
        runs: STORED_RUNS,
        post_to_done_ms: ms,
        post_to_done_ms_each: stored.map((run) => run.ms),
        server_ms_median: median(stored.map((run) => run.server_ms ?? Number.NaN)),
        server_cpu_ms_median: median(stored.map((run) => run.server_cpu_ms)),
        status: allDone ? 'done' : stored.map((run) => run.job.status).join(','),
        trades: stored[0]?.job.result?.metrics.total_trades ?? null,
        upstream_requests: upstreamCallsAfter - upstreamCalls,
      },
      stored_after_restart: { post_to_done_ms: fresh.ms, server_ms: fresh.server_ms, server_cpu_ms: fresh.server_cpu_ms, status: fresh.job.status },
      cold_store_archive_files_made: coldAgain,
      load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
      ...(profiles ? { cpu_profile_stored_runs: profiles } : {}),
    }
  } finally {
    await server?.stop()
    replay.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

async function coldStoreAgain(env: Record<string, string>, before: ReplayStats): Promise<JobsReport['cold_store_archive_files_made']> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-jobs-'))
  const server = await startServer({ env, dataDir })
  try {
    const [key] = await createApiKeys(server, 'bench-jobs@perpetua.test', ['backtests:read', 'backtests:write'], 1)
    const run = await timeJob(server, new RequestSigner(key!))
    const after = await replayStats(env.UPSTREAM_URL!)
    return {
      post_to_done_ms: run.ms,
      server_ms: run.server_ms,
      server_cpu_ms: run.server_cpu_ms,
      status: run.job.status,
      upstream_requests: after.requests - before.requests,
      archive_files: after.archiveFiles - before.archiveFiles,
    }
  } finally {
    await server.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

/** POST a job (this file's JOB by default) and read the list every 20 ms until it shows the job terminal. */
export async function timeJob(server: BenchServer, signer: RequestSigner, body: Record<string, unknown> = JOB): Promise<Timed> {
  const cpuBefore = cpuMicros(server.pid)
  const started = performance.now()
  const { id } = await signedJson<JobView>(server.url, signer, 'POST', '/v1/backtest/jobs', body)
  // The list is not subject to the per-job polling limit; 20 ms between looks.
  for (;;) {
    const page = await signedJson<{ data: JobView[] }>(server.url, signer, 'GET', '/v1/backtest/jobs?limit=1')
    const job = page.data.find((j) => j.id === id)
    if (job && !['queued', 'running'].includes(job.status)) {
      const ms = Math.round(performance.now() - started)
      const serverCpuMs = Math.round((cpuMicros(server.pid) - cpuBefore) / 1000)
      const serverMs = job.finished_at ? Date.parse(job.finished_at) - Date.parse(job.submitted_at) : null
      log(`job ${id}: ${job.status} after ${ms} ms (server ${serverMs} ms, server CPU ${serverCpuMs} ms)${job.error ? ` (${JSON.stringify(job.error)})` : ''}`)
      return { ms, server_ms: serverMs, server_cpu_ms: serverCpuMs, job }
    }
    if (performance.now() - started > 15 * 60_000) throw new Error(`job ${id} did not finish in 15 minutes`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}
