import path from 'node:path'
import { createApiKeys } from './support/keys.js'
import { log } from './support/log.js'
import { startBenchReplay } from './support/replay.js'
import { REPO_ROOT, startServer } from './support/server.js'
import { RequestSigner, signedJson } from './support/signing.js'

/** The goal from issue 4: POST to done in under a second once the history is stored. */
const GOAL_STORED_MS = 1000
const SHARED_DATA = path.resolve(REPO_ROOT, '..', 'shared', 'data')
const JOB = {
  template_id: 'sma_cross',
  params: { fast: 10, slow: 30 },
  symbols: ['BTCUSDT'],
  timeframe: '5m',
  start: '2023-01-01T00:00:00Z',
  end: '2026-02-19T23:55:00Z',
  capital: '10000',
}

interface JobView {
  id: string
  status: string
  error: unknown
  result: { metrics: { total_trades: number } } | null
}

/**
 * POST to done for BTCUSDT 5m over 2023-01-01..2026-02-19 (330k bars), through the whole service:
 * signed request, queue, history store, engine thread, result stored. First with a cold store (the
 * replay exchange over ../shared/data serves the klines and funding, within its weight limits), then
 * the same job again with the history stored.
 */
export async function measureJobs(): Promise<Record<string, unknown>> {
  // Its clock after the 5m series ends, so the whole range is history.
  const replay = await startBenchReplay(['--data', SHARED_DATA, '--start', '2026-05-17T00:00:00Z'])
  const server = await startServer({
    env: { UPSTREAM_URL: replay.url, RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000000', RATE_LIMIT_IP_PER_MINUTE: '1000000000', WORKERS: '1' },
  })
  try {
    const [key] = await createApiKeys(server, 'bench-jobs@perpetua.test', ['backtests:read', 'backtests:write'], 1)
    const signer = new RequestSigner(key!)
    const cold = await timeJob(server.url, signer)
    const upstreamCalls = (await replay.stats()).requests
    const stored = await timeJob(server.url, signer)
    const upstreamCallsAfter = (await replay.stats()).requests
    return {
      job: JOB,
      cold_store: { post_to_done_ms: cold.ms, status: cold.job.status, trades: cold.job.result?.metrics.total_trades ?? null, upstream_requests: upstreamCalls },
      stored: { post_to_done_ms: stored.ms, status: stored.job.status, upstream_requests: upstreamCallsAfter - upstreamCalls },
      goal: { stored_under_ms: GOAL_STORED_MS, met: stored.job.status === 'done' && stored.ms < GOAL_STORED_MS },
    }
  } finally {
    await server.stop()
    replay.stop()
  }
}

async function timeJob(url: string, signer: RequestSigner): Promise<{ ms: number; job: JobView }> {
  const started = performance.now()
  const { id } = await signedJson<JobView>(url, signer, 'POST', '/v1/backtest/jobs', JOB)
  // The list is not subject to the per-job polling limit; 20 ms between looks.
  for (;;) {
    const page = await signedJson<{ data: JobView[] }>(url, signer, 'GET', '/v1/backtest/jobs?limit=1')
    const job = page.data.find((j) => j.id === id)
    if (job && !['queued', 'running'].includes(job.status)) {
      const ms = Math.round(performance.now() - started)
      log(`job ${id}: ${job.status} after ${ms} ms${job.error ? ` (${JSON.stringify(job.error)})` : ''}`)
      return { ms, job }
    }
    if (performance.now() - started > 15 * 60_000) throw new Error(`job ${id} did not finish in 15 minutes`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
