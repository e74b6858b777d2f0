import { type RawBuilder, type Selectable, sql } from 'kysely'
import type { Db } from '../db/connect.js'
import type { BacktestSweepsTable, BacktestSweepTasksTable, JobStatus } from '../db/schema.js'
import { recordEvent, recordEvents } from '../events/outbox.js'
import type { KeysetPosition } from '../http/cursor.js'
import { silentSince } from '../work/recover-lost.js'

export type SweepRow = Omit<Selectable<BacktestSweepsTable>, 'configurations' | 'days'>
export type TaskRow = Selectable<BacktestSweepTasksTable>

const LIVE: JobStatus[] = ['queued', 'running']
export const SWEEP_DONE = 'backtest.sweep_done'

const sweepColumns = [
  'id',
  'user_id',
  'status',
  'template_id',
  'config',
  'runs_total',
  'runs_done',
  'submitted_at',
  'started_at',
  'finished_at',
  'result',
  'error',
  'cancel_reason',
] as const

export async function insertSweep(
  trx: Db,
  sweep: { id: string; userId: number; templateId: string; config: object; configurations: object[]; submittedAt: Date },
  tasks: { first_run: number; run_count: number }[],
): Promise<SweepRow> {
  const row = await trx
    .insertInto('backtest_sweeps')
    .values({
      id: sweep.id,
      user_id: sweep.userId,
      status: 'queued',
      template_id: sweep.templateId,
      config: JSON.stringify(sweep.config),
      configurations: JSON.stringify(sweep.configurations),
      runs_total: sweep.configurations.length,
      days: null,
      submitted_at: sweep.submittedAt,
      started_at: null,
      finished_at: null,
      result: null,
      error: null,
      cancel_reason: null,
    })
    .returning(sweepColumns)
    .executeTakeFirstOrThrow()
  const rows = tasks.map((task, i) => ({ sweep_id: sweep.id, task_no: i + 1, kind: 'runs' as const, status: 'queued' as const, heartbeat_at: null, ...task }))
  rows.push({ sweep_id: sweep.id, task_no: tasks.length + 1, kind: 'statistics' as never, status: 'waiting' as never, heartbeat_at: null, first_run: 1, run_count: sweep.configurations.length })
  for (let i = 0; i < rows.length; i += 1000) await trx.insertInto('backtest_sweep_tasks').values(rows.slice(i, i + 1000)).execute()
  return row
}

export async function findSweep(db: Db, userId: number, id: string, options: { forUpdate?: boolean } = {}): Promise<SweepRow | undefined> {
  const query = db.selectFrom('backtest_sweeps').select(sweepColumns).where('id', '=', id).where('user_id', '=', userId)
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst()
}

export async function listSweeps(db: Db, userId: number, filter: { status?: JobStatus; after?: KeysetPosition; limit: number }): Promise<SweepRow[]> {
  let query = db.selectFrom('backtest_sweeps').select(sweepColumns).where('user_id', '=', userId)
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.after) {
    const { time, id } = filter.after
    query = query.where((eb) => eb.or([eb('submitted_at', '<', time), eb.and([eb('submitted_at', '=', time), eb('id', '<', id)])]))
  }
  return query.orderBy('submitted_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute()
}

export async function markSweepCancelled(trx: Db, id: string, at: Date, reason: string | null): Promise<SweepRow> {
  return trx
    .updateTable('backtest_sweeps')
    .set({ status: 'cancelled', finished_at: at, cancel_reason: reason, result: null, error: null })
    .where('id', '=', id)
    .returning(sweepColumns)
    .executeTakeFirstOrThrow()
}

/**
 * Run `attempt` of a task takes it, only while no run holds it (heartbeat_at null) and its sweep is
 * live; the sweep turns running at its first task. The task's configurations come with it.
 */
export async function claimTask(db: Db, sweepId: string, taskNo: number, attempt: number, at: Date) {
  const task = await db
    .updateTable('backtest_sweep_tasks')
    .set({ status: 'running', heartbeat_at: sql`now()` })
    .where('sweep_id', '=', sweepId)
    .where('task_no', '=', taskNo)
    .where('attempt', '=', attempt)
    .where('heartbeat_at', 'is', null)
    .where('status', 'in', ['queued', 'running'])
    .where((eb) => eb.exists(eb.selectFrom('backtest_sweeps').select('id').where('id', '=', sweepId).where('status', 'in', LIVE)))
    .returningAll()
    .executeTakeFirst()
  if (!task) return undefined
  const sweep = await db
    .updateTable('backtest_sweeps')
    .set({ status: 'running', started_at: sql`coalesce(started_at, ${at})` })
    .where('id', '=', sweepId)
    .where('status', 'in', LIVE)
    .returning(['user_id', 'config', 'started_at', 'submitted_at'])
    .executeTakeFirst()
  return sweep && { task, sweep }
}

/** The params of runs first .. first + count − 1, in run order. */
export async function configurationsOf(db: Db, sweepId: string, first: number, count: number): Promise<Record<string, unknown>[]> {
  const row = await db
    .selectFrom('backtest_sweeps')
    .select(
      sql<Record<string, unknown>[]>`(select coalesce(json_agg(e.value order by e.ordinality), '[]'::json)
        from json_array_elements(configurations) with ordinality as e
        where e.ordinality between ${first} and ${first + count - 1})`.as('slice'),
    )
    .where('id', '=', sweepId)
    .executeTakeFirstOrThrow()
  return row.slice
}

/** A heartbeat of run `attempt` (database clock); false once the run no longer owns the task or its sweep ended. */
export async function beatTask(db: Db, sweepId: string, taskNo: number, attempt: number): Promise<boolean> {
  const row = await db
    .updateTable('backtest_sweep_tasks')
    .set({ heartbeat_at: sql`now()` })
    .where('sweep_id', '=', sweepId)
    .where('task_no', '=', taskNo)
    .where('attempt', '=', attempt)
    .where('status', '=', 'running')
    .where((eb) => eb.exists(eb.selectFrom('backtest_sweeps').select('id').where('id', '=', sweepId).where('status', '=', 'running')))
    .returning('task_no')
    .executeTakeFirst()
  return row !== undefined
}

export interface StoredRun {
  run_no: number
  params: Record<string, unknown>
  metrics: Record<string, unknown>
  objective: number | null
  equity: Buffer
}

/**
 * Stores runs, each at most once whichever run of its task stores it (the key), and counts only what
 * this insert stored; the first run stored also records the sweep's days.
 */
export async function storeRuns(trx: Db, sweepId: string, runs: readonly StoredRun[], days: Buffer): Promise<number> {
  if (runs.length === 0) return 0
  const rows = runs.map((run) => ({ sweep_id: sweepId, ...run, params: JSON.stringify(run.params), metrics: JSON.stringify(run.metrics) }))
  const stored = await trx.insertInto('backtest_sweep_runs').values(rows).onConflict((oc) => oc.columns(['sweep_id', 'run_no']).doNothing()).returning('run_no').execute()
  if (stored.length > 0) {
    await trx
      .updateTable('backtest_sweeps')
      .set({ runs_done: sql`runs_done + ${stored.length}`, days: sql`coalesce(days, ${days})` })
      .where('id', '=', sweepId)
      .execute()
  }
  return stored.length
}

/**
 * Run `attempt` finishes a 'runs' task; when it was the sweep's last, the statistics task is queued and
 * its number returned (the sweep's row is locked first, so two last tasks finishing at once queue it once).
 */
export async function finishRunsTask(trx: Db, sweepId: string, taskNo: number, attempt: number): Promise<{ owned: boolean; statisticsTask?: number }> {
  await trx.selectFrom('backtest_sweeps').select('id').where('id', '=', sweepId).forUpdate().executeTakeFirst()
  if (!(await leaveRunning(trx, sweepId, taskNo, attempt, 'done'))) return { owned: false }
  const open = await trx
    .selectFrom('backtest_sweep_tasks')
    .select((eb) => eb.fn.countAll<string>().as('open'))
    .where('sweep_id', '=', sweepId)
    .where('kind', '=', 'runs')
    .where('status', '!=', 'done')
    .executeTakeFirstOrThrow()
  if (Number(open.open) > 0) return { owned: true }
  const statistics = await trx
    .updateTable('backtest_sweep_tasks')
    .set({ status: 'queued' })
    .where('sweep_id', '=', sweepId)
    .where('kind', '=', 'statistics')
    .where('status', '=', 'waiting')
    .returning('task_no')
    .executeTakeFirst()
  return { owned: true, statisticsTask: statistics?.task_no }
}

/** Ends a running sweep (and its task, when run `attempt` of it still owns it) and records backtest.sweep_done; false when it was no longer running. */
export async function finishSweep(
  trx: Db,
  sweep: { id: string; userId: number; templateId: string },
  task: { taskNo: number; attempt: number } | undefined,
  outcome: { status: 'done'; result: Record<string, unknown>; best: Record<string, unknown> } | { status: 'failed'; error: { code: string; message: string } },
  at: Date,
): Promise<boolean> {
  if (task) {
    const owned = await trx
      .updateTable('backtest_sweep_tasks')
      .set({ status: 'done', heartbeat_at: null })
      .where('sweep_id', '=', sweep.id)
      .where('task_no', '=', task.taskNo)
      .where('attempt', '=', task.attempt)
      .where('status', '=', 'running')
      .returning('task_no')
      .executeTakeFirst()
    if (!owned) return false
  }
  const values = outcome.status === 'done' ? { status: 'done' as const, result: JSON.stringify(outcome.result), error: null } : { status: 'failed' as const, error: JSON.stringify(outcome.error), result: null }
  const ended = await trx.updateTable('backtest_sweeps').set({ ...values, finished_at: at }).where('id', '=', sweep.id).where('status', 'in', LIVE).returning('id').executeTakeFirst()
  if (!ended) return false
  const data =
    outcome.status === 'done'
      ? { sweep_id: sweep.id, status: 'done', template_id: sweep.templateId, best: outcome.best }
      : { sweep_id: sweep.id, status: 'failed', template_id: sweep.templateId, error: outcome.error }
  await recordEvent(trx, { userId: sweep.userId, type: SWEEP_DONE, data, at })
  return true
}

/** Whether recoverLostTasks would find a task (of a live sweep or an ended one): one statement of the loop's look (start-work.ts). */
export function anyLostTask(lostAfterMs: number): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from backtest_sweep_tasks where status = 'running' and heartbeat_at < ${silentSince(lostAfterMs)})`
}

/**
 * Running tasks of live sweeps whose run has not beaten for `lostAfterMs` (database clock): a task on
 * its last attempt fails its sweep as WORKER_LOST; any other is handed to its next attempt. SKIP
 * LOCKED, inside the transaction that enqueues the re-runs, as backtests/queries.ts recoverLostJobs.
 */
export async function recoverLostTasks(trx: Db, lostAfterMs: number, at: Date, maxAttempts: number) {
  const lost = await trx
    .selectFrom('backtest_sweep_tasks as t')
    .innerJoin('backtest_sweeps as s', 's.id', 't.sweep_id')
    .select(['t.sweep_id', 't.task_no', 't.attempt', 's.user_id', 's.template_id', 's.status as sweep_status'])
    .where('t.status', '=', 'running')
    .where('t.heartbeat_at', '<', silentSince(lostAfterMs))
    .forUpdate('t')
    .skipLocked()
    .execute()
  const ofLiveSweeps = lost.filter((task) => task.sweep_status === 'running')
  const lostTwice = ofLiveSweeps.filter((task) => task.attempt >= maxAttempts)
  const rerun = ofLiveSweeps.filter((task) => task.attempt < maxAttempts).map((task) => ({ sweepId: task.sweep_id, task: task.task_no, attempt: task.attempt + 1, user: task.user_id }))
  // A task of an ended sweep stops beating by design: it is closed, not re-run.
  for (const task of lost.filter((t) => t.sweep_status !== 'running')) {
    await trx.updateTable('backtest_sweep_tasks').set({ status: 'done', heartbeat_at: null }).where('sweep_id', '=', task.sweep_id).where('task_no', '=', task.task_no).execute()
  }
  const failedIds = [...new Set(lostTwice.map((task) => task.sweep_id))]
  if (failedIds.length > 0) {
    const error = { code: 'WORKER_LOST', message: `a worker running part of this sweep stopped during each of its ${maxAttempts} runs; submit it again` }
    const failed = await trx.updateTable('backtest_sweeps').set({ status: 'failed', finished_at: at, error: JSON.stringify(error) }).where('id', 'in', failedIds).where('status', 'in', LIVE).returning(['id', 'user_id', 'template_id']).execute()
    await recordEvents(trx, failed.map((sweep) => ({ userId: sweep.user_id, type: SWEEP_DONE, data: { sweep_id: sweep.id, status: 'failed', template_id: sweep.template_id, error }, at })))
  }
  for (const run of rerun) {
    await trx
      .updateTable('backtest_sweep_tasks')
      .set({ attempt: run.attempt, heartbeat_at: null, status: 'queued' })
      .where('sweep_id', '=', run.sweepId)
      .where('task_no', '=', run.task)
      .execute()
  }
  return { rerun, failed: failedIds }
}

/** A page of runs: in run order after `afterRun`, or by objective (best first, nulls last) after a position. */
export async function pageRuns(
  db: Db,
  sweepId: string,
  options: { sort: 'run' | 'objective'; after?: { objective: number | null; run: number }; limit: number },
) {
  let query = db.selectFrom('backtest_sweep_runs').select(['run_no', 'params', 'metrics', 'objective']).where('sweep_id', '=', sweepId)
  const after = options.after
  if (options.sort === 'run') {
    if (after) query = query.where('run_no', '>', after.run)
    return query.orderBy('run_no').limit(options.limit).execute()
  }
  if (after) {
    query =
      after.objective === null
        ? query.where((eb) => eb.and([eb('objective', 'is', null), eb('run_no', '>', after.run)]))
        : query.where((eb) =>
            eb.or([
              eb('objective', '<', after.objective),
              eb('objective', 'is', null),
              eb.and([eb('objective', '=', after.objective), eb('run_no', '>', after.run)]),
            ]),
          )
  }
  return query.orderBy(sql`objective desc nulls last`).orderBy('run_no').limit(options.limit).execute()
}

/** The sweep's days (epoch ms, float64 LE), written by its first run stored; null before. */
export async function sweepDays(db: Db, sweepId: string): Promise<Buffer | null> {
  const sweep = await db.selectFrom('backtest_sweeps').select('days').where('id', '=', sweepId).executeTakeFirstOrThrow()
  return sweep.days
}

/**
 * Runs with their equity: those of `runNos`, or a keyset page in run order (after run `after`, up to run
 * `last`, at most `limit`): what the statistics and GET …/returns read, a page at a time.
 */
export async function runEquities(db: Db, sweepId: string, runs: { runNos: readonly number[] } | { after: number; last: number; limit: number }) {
  let query = db.selectFrom('backtest_sweep_runs').select(['run_no', 'params', 'metrics', 'objective', 'equity']).where('sweep_id', '=', sweepId)
  if ('runNos' in runs) query = query.where('run_no', 'in', runs.runNos.length > 0 ? [...runs.runNos] : [0])
  else query = query.where('run_no', '>', runs.after).where('run_no', '<=', runs.last).limit(runs.limit)
  return query.orderBy('run_no').execute()
}

/** Hands run `attempt` of a task back to the queue (its node is stopping), as backtests/queries.ts handBackJob does a job's. */
export function handBackTask(trx: Db, sweepId: string, taskNo: number, attempt: number): Promise<boolean> {
  return leaveRunning(trx, sweepId, taskNo, attempt, 'queued')
}

/** Moves a task that run `attempt` still runs to `status`, its heartbeat cleared; false when that run no longer owns it. */
async function leaveRunning(trx: Db, sweepId: string, taskNo: number, attempt: number, status: 'done' | 'queued'): Promise<boolean> {
  const row = await trx
    .updateTable('backtest_sweep_tasks')
    .set({ status, heartbeat_at: null })
    .where('sweep_id', '=', sweepId)
    .where('task_no', '=', taskNo)
    .where('attempt', '=', attempt)
    .where('status', '=', 'running')
    .returning('task_no')
    .executeTakeFirst()
  return row !== undefined
}
