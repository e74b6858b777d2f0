import { type Selectable, sql } from 'kysely'
import type { Db } from '../db/connect.js'
import type { BacktestJobsTable, JobStatus } from '../db/schema.js'
import type { KeysetPosition } from '../http/cursor.js'

export type JobRow = Selectable<BacktestJobsTable>

const LIVE: JobStatus[] = ['queued', 'running']

/**
 * Counts the user's queued and running jobs while holding a lock on the user's row, so concurrent
 * creates for one user take turns and the 5-job limit cannot be overshot (spec "Limits").
 */
export async function lockUserAndCountLiveJobs(trx: Db, userId: number): Promise<number> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().executeTakeFirstOrThrow()
  const row = await trx
    .selectFrom('backtest_jobs')
    .select((eb) => eb.fn.countAll<string>().as('live'))
    .where('user_id', '=', userId)
    .where('status', 'in', LIVE)
    .executeTakeFirstOrThrow()
  return Number(row.live)
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

/** queued → running, only if still queued (a cancel may have won). */
export async function claimJob(db: Db, id: string, at: Date): Promise<JobRow | undefined> {
  return db
    .updateTable('backtest_jobs')
    .set({ status: 'running', started_at: at, heartbeat_at: at })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .returningAll()
    .executeTakeFirst()
}

/** Records progress and a heartbeat; answers the job's status so the runner notices a cancel. */
export async function recordProgress(db: Db, id: string, progress: number, at: Date): Promise<JobStatus | undefined> {
  const row = await db
    .updateTable('backtest_jobs')
    .set({ progress: sql`greatest(progress, ${progress})`, heartbeat_at: at })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .returning('status')
    .executeTakeFirst()
  if (row) return row.status
  return (await db.selectFrom('backtest_jobs').select('status').where('id', '=', id).executeTakeFirst())?.status
}

export async function finishJob(
  db: Db,
  id: string,
  outcome: { status: 'done'; metrics: Record<string, unknown>; result: Record<string, unknown> } | { status: 'failed'; error: { code: string; message: string } },
  at: Date,
): Promise<JobRow | undefined> {
  const values =
    outcome.status === 'done'
      ? { status: 'done' as const, progress: 1, metrics: JSON.stringify(outcome.metrics), result: JSON.stringify(outcome.result), error: null }
      : { status: 'failed' as const, error: JSON.stringify(outcome.error), result: null }
  return db
    .updateTable('backtest_jobs')
    .set({ ...values, finished_at: at, heartbeat_at: at })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .returningAll()
    .executeTakeFirst()
}

/** Running jobs whose worker stopped beating since `staleBefore`: failed as WORKER_LOST. */
export async function failLostJobs(db: Db, staleBefore: Date, at: Date): Promise<string[]> {
  const rows = await db
    .updateTable('backtest_jobs')
    .set({
      status: 'failed',
      finished_at: at,
      error: JSON.stringify({ code: 'WORKER_LOST', message: 'the worker running this job stopped; submit it again' }),
    })
    .where('status', '=', 'running')
    .where('heartbeat_at', '<', staleBefore)
    .returning('id')
    .execute()
  return rows.map((r) => r.id)
}
