import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { type JobView, median, type Timed, timeJob } from './backtest-jobs.js'
import { atMost } from './support/ceiling.js'
import { createApiKeys } from './support/keys.js'
import { log } from './support/log.js'
import { type BenchReplay, startBenchReplay } from './support/replay.js'
import { type BenchServer, ensureBuilt, startServer } from './support/server.js'
import { RequestSigner, signedJson } from './support/signing.js'
import type { SuiteResult } from './support/suite.js'

/** Issue 30: POST → done for the three-year case with the history stored, and from a cold store through the archive. */
const GOAL_STORED_MS = 1_500
const GOAL_COLD_MS = 10_000
const STORED_RUNS = 5

const EXITS = { stop_loss: '0.02', take_profit: '0.03', trailing_stop: '0.012', trailing_activation: '0.015' }
const BASE = { template_id: 'sma_cross', params: { fast: 10, slow: 30, allow_short: true }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '10000', exits: EXITS }
/** (a) The replay's BTCUSDT 1m bars: 2025-05-04 15:33 to 2025-06-24, whole hours of them. */
const ONE_MINUTE = { ...BASE, start: '2025-05-04T16:00:00Z', end: '2025-06-24T23:00:00Z' }
/** (b) Its 5m bars, 2023-01-01 to 2026-02-19 (the 1m span inside them examined on 1m). */
const THREE_YEARS = { ...BASE, start: '2023-01-01T00:00:00Z', end: '2026-02-19T23:00:00Z' }

interface Run {
  post_to_done_ms: number
  server_ms: number | null
  server_cpu_ms: number
  status: string
  trades: number | null
  exit_resolution: Record<string, Record<string, number>> | null
  /** REST requests (klines and mark questions, funding, time, exchangeInfo) and archive zips during the run. */
  upstream_requests: number
  archive_files: number
}

/**
 * sma_cross 1h with stop, target and trailing stop through POST /v1/backtest/jobs → done on the replay
 * exchange (`perpetua serve` over its own DATA_DIR, the replay's clock at 2026-05-17 so the 5m series is
 * all history): (a) over the replay's 1m range, (b) over 2023-01..2026-02, each with the history stored
 * (median of STORED_RUNS), and (b) from a cold store through the archive, once while the replay makes its
 * archive files and once more where they are made (a static file host, as Binance's archive is). The
 * stored case also runs without exits, for the cost of the exits' history and walk.
 */
export async function run(): Promise<SuiteResult> {
  await ensureBuilt()
  const replay = await startBenchReplay(['--start', '2026-05-17T00:00:00Z'])
  const env = { UPSTREAM_URL: replay.url, UPSTREAM_ARCHIVE_URL: replay.url, RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000000', RATE_LIMIT_IP_PER_MINUTE: '1000000000', WORKERS: '1' }
  const failures: string[] = []
  try {
    const first = await onFreshServer(env, replay, async (job) => {
      const cold = await job(THREE_YEARS)
      const stored = await storedRuns(job, THREE_YEARS)
      const minute = await storedRuns(job, ONE_MINUTE)
      const withoutExits = await storedRuns(job, { ...THREE_YEARS, exits: undefined })
      return { cold, stored, minute, withoutExits }
    })
    const coldFilesMade = await onFreshServer(env, replay, (job) => job(THREE_YEARS))
    const coldMinute = await onFreshServer(env, replay, (job) => job(ONE_MINUTE))

    const runs = [first.cold, ...first.stored.runs, ...first.minute.runs, coldFilesMade, coldMinute]
    for (const r of runs) if (r.status !== 'done') failures.push(`a job ended ${r.status}`)
    for (const r of runs) if (r.exit_resolution === null) failures.push('a job with exits has no exit_resolution: the API ignored exits (this branch needs the api branch merged)')
    const report = {
      suite: 'exits-api',
      job: BASE,
      one_minute_range: { range: [ONE_MINUTE.start, ONE_MINUTE.end], stored: first.minute.summary, cold_store: coldMinute },
      three_years: {
        range: [THREE_YEARS.start, THREE_YEARS.end],
        stored: first.stored.summary,
        stored_without_exits: first.withoutExits.summary,
        cold_store_archive_files_made: coldFilesMade,
        cold_store_replay_making_files: first.cold,
      },
      goal: {
        three_years_stored_post_to_done_ms: atMost(first.stored.summary.post_to_done_ms, GOAL_STORED_MS),
        three_years_cold_store_post_to_done_ms: atMost(coldFilesMade.post_to_done_ms, GOAL_COLD_MS),
      },
      load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
      node: process.version,
    }
    return { report, failures }
  } finally {
    replay.stop()
  }
}

type Job = (body: Record<string, unknown>) => Promise<Run>

/** A `perpetua serve` over a fresh DATA_DIR for `work`, with one API key; removed after. */
async function onFreshServer<T>(env: Record<string, string>, replay: BenchReplay, work: (job: Job) => Promise<T>): Promise<T> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'perpetua-bench-exits-'))
  let server: BenchServer | undefined
  try {
    server = await startServer({ env, dataDir })
    const [key] = await createApiKeys(server, 'bench-exits@perpetua.test', ['backtests:read', 'backtests:write'], 1)
    const signer = new RequestSigner(key!)
    return await work((body) => measured(server!, signer, replay, body))
  } finally {
    await server?.stop()
    fs.rmSync(dataDir, { recursive: true, force: true })
  }
}

async function measured(server: BenchServer, signer: RequestSigner, replay: BenchReplay, body: Record<string, unknown>): Promise<Run> {
  const before = await replay.stats()
  const timed: Timed = await timeJob(server, signer, body)
  const after = await replay.stats()
  const job = await signedJson<JobView & { result: { exit_resolution?: Record<string, Record<string, number>> } | null }>(server.url, signer, 'GET', `/v1/backtest/jobs/${timed.job.id}`)
  return {
    post_to_done_ms: timed.ms,
    server_ms: timed.server_ms,
    server_cpu_ms: timed.server_cpu_ms,
    status: timed.job.status,
    trades: job.result?.metrics.total_trades ?? null,
    exit_resolution: job.result?.exit_resolution ?? null,
    upstream_requests: after.requests - before.requests,
    archive_files: after.archiveFiles - before.archiveFiles,
  }
}

async function storedRuns(job: Job, body: Record<string, unknown>) {
  const runs: Run[] = []
  for (let k = 0; k < STORED_RUNS; k++) runs.push(await job(body))
  log(`${body.start}..${body.end}${body.exits ? '' : ' without exits'}: stored ${runs.map((r) => r.post_to_done_ms).join(', ')} ms`)
  const summary = {
    runs: STORED_RUNS,
    post_to_done_ms: median(runs.map((r) => r.post_to_done_ms)),
    post_to_done_ms_each: runs.map((r) => r.post_to_done_ms),
    server_ms_median: median(runs.map((r) => r.server_ms ?? Number.NaN)),
    server_cpu_ms_median: median(runs.map((r) => r.server_cpu_ms)),
    trades: runs[0]!.trades,
    exit_resolution: runs[0]!.exit_resolution,
    upstream_requests: runs.reduce((sum, r) => sum + r.upstream_requests, 0),
  }
  return { runs, summary }
}
