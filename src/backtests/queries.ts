import { type RawBuilder, type Selectable, sql, type UpdateObject } from 'kysely'
import type { Db } from '../db/connect.js'
import type { BacktestJobsTable, Database, JobStatus } from '../db/schema.js'
import { recordEvents } from '../events/outbox.js'
import type { KeysetPosition } from '../http/cursor.js'
import { silentSince } from '../work/recover-lost.js'

export type JobRow = Selectable<BacktestJobsTable>

const LIVE: JobStatus[] = ['queued', 'running']

/**
 * Counts the user's queued and running jobs, a sweep counting as one (issue 23), while holding a lock
 * on the user's row, so concurrent creates for one user take turns and the 5-job limit cannot be
 * overshot (spec "Limits").
 */
export async function lockUserAndCountLiveJobs(trx: Db, userId: number): Promise<number> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirstOrThrow()
  const count = (table: 'backtest_jobs' | 'backtest_sweeps') =>
    trx
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string>().as('live'))
      .where('user_id', '=', userId)
      .where('status', 'in', LIVE)
      .executeTakeFirstOrThrow()
  const jobs = await count('backtest_jobs')
  const sweeps = await count('backtest_sweeps')
  return Number(jobs.live) + Number(sweeps.live)
}

export async function insertJob(
  db: Db,
  job: { id: string; userId: number; templateId: string; config: Record<string, unknown>; submittedAt: Date },
): Promise<JobRow> {
  return db
    .insertInto('backtest_jobs')
    .values({
      id: job.id,
      user_id: job.userId,
      status: 'queued',
      template_id: job.templateId,
      config: JSON.stringify(job.config),
      submitted_at: job.submittedAt,
      started_at: null,
      finished_at: null,
      heartbeat_at: null,
      metrics: null,
      result: null,
      error: null,
      cancel_reason: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** A job of this user, without the (possibly large) result unless asked for. */
export async function findJob(db: Db, userId: number, id: string, options: { withResult: boolean; forUpdate?: boolean }) {
  let query = db.selectFrom('backtest_jobs').where('id', '=', id).where('user_id', '=', userId)
  query = options.forUpdate ? query.forUpdate() : query
  return options.withResult
    ? query.selectAll().executeTakeFirst()
    : query.select(listColumns).executeTakeFirst().then((row) => row && { ...row, result: null })
}

const listColumns = [
  'id',
  'user_id',
  'status',
  'template_id',
  'config',
  'submitted_at',
  'started_at',
  'finished_at',
  'heartbeat_at',
  'progress',
  'metrics',
  'error',
  'cancel_reason',
] as const

export async function listJobs(
  db: Db,
  userId: number,
  filter: { status?: JobStatus; templateId?: string; from?: Date; to?: Date; after?: KeysetPosition; limit: number },
) {
  let query = db.selectFrom('backtest_jobs').select(listColumns).where('user_id', '=', userId)
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.templateId) query = query.where('template_id', '=', filter.templateId)
  if (filter.from) query = query.where('submitted_at', '>=', filter.from)
  if (filter.to) query = query.where('submitted_at', '<', filter.to)
  if (filter.after) {
    const { time, id } = filter.after
    query = query.where((eb) => eb.or([eb('submitted_at', '<', time), eb.and([eb('submitted_at', '=', time), eb('id', '<', id)])]))
  }
  return query.orderBy('submitted_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute()
}

export async function markCancelled(db: Db, id: string, at: Date, reason: string | null): Promise<JobRow> {
  return db
    .updateTable('backtest_jobs')
    .set({ status: 'cancelled', finished_at: at, cancel_reason: reason, result: null, error: null })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/**
 * Run `attempt` of the job takes it: queued → running for the first run, running (waiting) → running
 * for a re-run; only while no run holds it (heartbeat_at null) and a cancel has not won.
 */
export async function claimJob(db: Db, id: string, attempt: number, at: Date): Promise<JobRow | undefined> {
  return db
    .updateTable('backtest_jobs')
    .set({ status: 'running', started_at: sql`coalesce(started_at, ${at})`, heartbeat_at: sql`now()` })
    .where('id', '=', id)
    .where('attempt', '=', attempt)
    .where('heartbeat_at', 'is', null)
    .where('status', 'in', LIVE)
    .returningAll()
    .executeTakeFirst()
}

/**
 * Records progress and a heartbeat (on the database's clock, like every heartbeat: one clock for all
 * nodes, and real time even where the app clock is a test's) for run `attempt`; false when that run no longer owns the job
 * (cancelled, or handed to a re-run), so the runner stops. Progress never goes back: a re-run shows
 * the furthest point reached until it passes it.
 */
export async function recordProgress(db: Db, id: string, attempt: number, progress: number): Promise<boolean> {
  return updateOwnedRun(db, id, attempt, { progress: sql`greatest(progress, ${progress})`, heartbeat_at: sql`now()` })
}

/**
 * Run `attempt` finishes the job (a done result as encodeResult stores it); false when that run no longer owns it.
 * A failed job keeps the furthest progress it reached: the run's own (`progress`), which may be ahead of its last beat.
 */
export async function finishJob(
  db: Db,
  id: string,
  attempt: number,
  outcome: { status: 'done'; metrics: Record<string, unknown>; result: Buffer } | { status: 'failed'; error: { code: string; message: string }; progress: number },
  at: Date,
): Promise<boolean> {
  const values =
    outcome.status === 'done'
      ? { status: 'done' as const, progress: 1, metrics: JSON.stringify(outcome.metrics), result: outcome.result, error: null }
      : { status: 'failed' as const, progress: sql<number>`greatest(progress, ${outcome.progress})`, error: JSON.stringify(outcome.error), result: null }
  return updateOwnedRun(db, id, attempt, { ...values, finished_at: at, heartbeat_at: at })
}

/** Whether recoverLostJobs would find a job: one statement of the loop's look for lost work (start-work.ts). */
export function anyLostJob(lostAfterMs: number): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from backtest_jobs where status = 'running' and heartbeat_at < ${silentSince(lostAfterMs)})`
}

/**
 * Running jobs whose run has not beaten for `lostAfterMs` (database clock): a job on its last attempt is failed
 * as WORKER_LOST; any other is handed to its next attempt (heartbeat cleared, so only that run can
 * claim it). SKIP LOCKED: sweeps on several nodes never take the same job. Call inside the
 * transaction that enqueues the re-runs, so a re-run exists exactly when its job says so.
 */
export async function recoverLostJobs(trx: Db, lostAfterMs: number, at: Date, maxAttempts: number): Promise<{ rerun: { id: string; attempt: number; userId: number }[]; failed: string[] }> {
  const lost = await trx
    .selectFrom('backtest_jobs')
    .select(['id', 'attempt', 'user_id', 'template_id'])
    .where('status', '=', 'running')
    .where('heartbeat_at', '<', silentSince(lostAfterMs))
    .forUpdate()
    .skipLocked()
    .execute()
  const lostTwice = lost.filter((job) => job.attempt >= maxAttempts)
  const failed = lostTwice.map((job) => job.id)
  const rerun = lost.filter((job) => job.attempt < maxAttempts).map((job) => ({ id: job.id, attempt: job.attempt + 1, userId: job.user_id }))
  if (failed.length > 0) {
    const error = { code: 'WORKER_LOST', message: `the worker running this job stopped during each of its ${maxAttempts} runs; submit it again` }
    await trx.updateTable('backtest_jobs').set({ status: 'failed', finished_at: at, error: JSON.stringify(error) }).where('id', 'in', failed).execute()
    const data = (job: (typeof lostTwice)[number]) => ({ job_id: job.id, status: 'failed', template_id: job.template_id, error })
    await recordEvents(trx, lostTwice.map((job) => ({ userId: job.user_id, type: 'backtest.job_done', data: data(job), at })))
  }
  if (rerun.length > 0) {
    await trx
      .updateTable('backtest_jobs')
      .set({ attempt: sql`attempt + 1`, heartbeat_at: null })
      .where('id', 'in', rerun.map((job) => job.id))
      .execute()
  }
  return { rerun, failed }
}

/**
 * Hands run `attempt` of a job back to the queue (its node is stopping): queued again, no heartbeat, the same
 * attempt, so another node's claim takes it at once and a planned stop does not count as a lost worker. False
 * when that run no longer owns the job.
 */
export function handBackJob(trx: Db, id: string, attempt: number): Promise<boolean> {
  return updateOwnedRun(trx, id, attempt, { status: 'queued', heartbeat_at: null })
}

/**
 * Updates the job while run `attempt` still owns it (running at that attempt); false when it no longer does. Only
 * whether it did comes back: returning the row sent a done job's whole result back through the database.
 */
async function updateOwnedRun(db: Db, id: string, attempt: number, values: UpdateObject<Database, 'backtest_jobs'>): Promise<boolean> {
  const row = await db.updateTable('backtest_jobs').set(values).where('id', '=', id).where('status', '=', 'running').where('attempt', '=', attempt).returning('id').executeTakeFirst()
  return row !== undefined
}
