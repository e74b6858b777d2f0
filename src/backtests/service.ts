import type { Db } from '../db/connect.js'
import type { JobStatus } from '../db/schema.js'
import { decodeCursor, encodeCursor } from '../http/cursor.js'
import { AppError, notFound } from '../http/errors.js'
import { newId } from '../http/ids.js'
import type { SharedState } from '../http/shared-state.js'
import { claimPoll } from '../http/rate-limit.js'
import { parseUtcTime } from '../http/time.js'
import { isUniqueViolation } from '../db/errors.js'
import type { TemplateCatalog } from '../custom-templates/template-catalog.js'
import { resolveJobConfig } from './config-resolution.js'
import { decodeResult } from './result-codec.js'
import { findJob, insertJob, type JobRow, listJobs, lockUserAndCountLiveJobs, markCancelled } from './queries.js'
import type { BacktestRun } from './job-message.js'
import type { CancelBody, Job, JobConfig, JobCreate, JobListQuery } from './schemas.js'
import { observeJob } from '../ops/registry.js'
import type { SymbolCheck } from '../strategies/tradable-symbols.js'

/** Queued or running jobs one user may have (spec "Limits"). */
export const MAX_LIVE_JOBS = 5
/** Polling one job faster than this answers 429 (spec "Limits"). */
export const POLL_INTERVAL_MS = 5000

export interface BacktestContext {
  db: Db
  userId: number
  now: Date
  templates: TemplateCatalog
  shared: SharedState
  /**
   * Enqueues the run inside the creating transaction (its commit wakes every node's workers: db/queue.ts),
   * at `priority`: minus the jobs and sweeps the user already had live, so users' jobs are taken in turn.
   */
  enqueue: (trx: Db, run: BacktestRun, priority: number) => Promise<void>
  /**
   * Refuses a symbol the exchange does not list (a typo such as BTCUSTD) before a job exists: the run would
   * fail a second later. Deferred while the listing cannot be read: the run then fails as it always did.
   */
  tradable: SymbolCheck
}

export async function createJob(context: BacktestContext, input: JobCreate): Promise<Job> {
  const { db, userId, now } = context
  const config = await resolveJobConfig(db, userId, input, context.templates, now.getTime())
  await context.tradable(config.symbols, 'defer', 'listed')
  const row = await db.transaction().execute(async (trx) => {
    const live = await reserveJobSlot(trx, userId)
    const job = await insertWithFreshId(trx, userId, config, now)
    await context.enqueue(trx, { jobId: job.id, user: userId }, -live)
    return job
  })
  return toJob(row)
}

/**
 * 429 unless the user has fewer than 5 backtests and sweeps queued or running; holds the user's row until
 * the transaction ends. Answers how many the user had.
 */
export async function reserveJobSlot(trx: Db, userId: number): Promise<number> {
  const live = await lockUserAndCountLiveJobs(trx, userId)
  if (live >= MAX_LIVE_JOBS) {
    throw new AppError('RATE_LIMITED', `you already have ${live} backtests or sweeps queued or running; the limit is ${MAX_LIVE_JOBS}`, {
      headers: { 'retry-after': '5' },
    })
  }
  return live
}

async function insertWithFreshId(trx: Db, userId: number, config: JobConfig, now: Date): Promise<JobRow> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await insertJob(trx, { id: newId('bt'), userId, templateId: config.template_id, config, submittedAt: now })
    } catch (error) {
      if (attempt < 3 && isUniqueViolation(error, 'backtest_jobs_pkey')) continue
      throw error
    }
  }
}

export async function pageJobs({ db, userId }: BacktestContext, query: JobListQuery) {
  const limit = query.limit ?? 20
  const rows = await listJobs(db, userId, {
    status: query.status as JobStatus | undefined,
    templateId: query.template_id,
    from: query.from !== undefined ? new Date(parseUtcTime(query.from, 'from')) : undefined,
    to: query.to !== undefined ? new Date(parseUtcTime(query.to, 'to')) : undefined,
    after: query.cursor !== undefined ? decodeCursor(query.cursor) : undefined,
    limit: limit + 1,
  })
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return {
    data: page.map((row) => toJob(row, { metricsOnly: true })),
    next_cursor: rows.length > limit && last ? encodeCursor({ time: last.submitted_at, id: last.id }) : null,
  }
}

export async function getJob({ db, userId, now, shared }: BacktestContext, id: string): Promise<Job> {
  const row = isJobId(id) ? await findJob(db, userId, id, { withResult: true }) : undefined
  if (!row) throw notFound(`backtest job ${id}`)
  await claimPoll(shared, `poll:${userId}:${id}`, POLL_INTERVAL_MS, now.getTime(), 'job')
  return toJob(row)
}

export async function cancelJob({ db, userId, now }: BacktestContext, id: string, body: CancelBody): Promise<Job> {
  if (!isJobId(id)) throw notFound(`backtest job ${id}`)
  const row = await db.transaction().execute(async (trx) => {
    const current = await findJob(trx, userId, id, { withResult: false, forUpdate: true })
    if (!current) throw notFound(`backtest job ${id}`)
    if (current.status !== 'queued' && current.status !== 'running') {
      throw new AppError('INVALID_STATE', `backtest job ${id} is already ${current.status}`)
    }
    return markCancelled(trx, id, now, body.reason ?? null)
  })
  observeJob('backtest', 'cancelled', row, now.getTime())
  return toJob(row)
}

const isJobId = (id: string): boolean => /^bt_[0-9a-f]{6,8}$/.test(id)

/** The API representation; list items carry only the metrics of a done job (spec "GET /v1/backtest/jobs"). */
export function toJob(row: Omit<JobRow, 'result' | 'attempt'> & { result?: JobRow['result'] }, options: { metricsOnly?: boolean } = {}): Job {
  const done = row.status === 'done'
  const result = !done ? null : options.metricsOnly || !row.result ? { metrics: row.metrics } : decodeResult(row.result)
  return {
    id: row.id,
    status: row.status,
    config: row.config as JobConfig,
    submitted_at: row.submitted_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
    progress: row.progress,
    result: result as Job['result'],
    error: row.status === 'failed' ? (row.error as Job['error']) : null,
  }
}
