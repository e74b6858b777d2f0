import { type RawBuilder, sql } from 'kysely'
import { insertInTransaction } from '../db/queue.js'
import type { AnyWorkHandler, WorkContext } from './work-handler.js'
import { metrics } from '../ops/registry.js'

/**
 * A running run without a heartbeat for this long lost its worker (10 missed beats), and every node
 * looks that often: a dead worker's work is found within LOST_AFTER_MS + SWEEP_MS (issue 12: within
 * 10 s). pg-boss's own job heartbeat cannot do this: its heartbeatSeconds is at least 10.
 */
export const LOST_AFTER_MS = 5_000
export const SWEEP_MS = 1_000
/** Runs of one piece of work before it fails as WORKER_LOST: the engine is deterministic, so a second run is safe. */
export const MAX_ATTEMPTS = 2

/** The heartbeat before which a running run lost its worker (database clock): each kind's recover and anyLost both read it. */
export function silentSince(lostAfterMs: number): RawBuilder<Date> {
  return sql<Date>`now() - make_interval(secs => ${lostAfterMs / 1000})`
}

/**
 * The handlers with lost work to hand on, asked in one statement: an idle node looks every SWEEP_MS, and
 * a transaction per handler was most of what it did. A failed look is logged and finds nothing; the next
 * one comes a sweep later.
 */
export async function handlersWithLostWork(work: Pick<WorkContext, 'db' | 'log'>, handlers: readonly AnyWorkHandler[]): Promise<AnyWorkHandler[]> {
  try {
    const probes = handlers.map((handler, i) => sql`${handler.anyLost(LOST_AFTER_MS)} as ${sql.ref(`h${i}`)}`)
    const { rows } = await sql<Record<string, boolean>>`select ${sql.join(probes)}`.execute(work.db)
    return handlers.filter((_, i) => rows[0]?.[`h${i}`] === true)
  } catch (error) {
    work.log.warn({ err: error }, 'looking for work whose worker was lost failed')
    return []
  }
}

/**
 * One look for `handler`'s lost work: re-runs are enqueued in the transaction that hands the work on
 * (no pg-boss retries: a lost run is found here, in seconds, not at pg-boss's expiry), so a re-run
 * exists exactly when its work says so.
 */
export async function recoverLost(work: Pick<WorkContext, 'db' | 'boss' | 'now' | 'log'>, handler: AnyWorkHandler): Promise<void> {
  const at = new Date(work.now())
  try {
    const found = await work.db.transaction().execute(async (trx) => {
      const recovered = await handler.recover(trx, { lostAfterMs: LOST_AFTER_MS, maxAttempts: MAX_ATTEMPTS, at })
      await insertInTransaction(work.boss, trx, handler.queue, recovered.rerun)
      return recovered
    })
    if (handler.kind) {
      metrics.jobsWorkerLost.inc({ kind: handler.kind }, found.rerun.length + found.failed.length)
      metrics.jobsRetried.inc({ kind: handler.kind }, found.rerun.length)
    }
    if (found.rerun.length > 0) work.log.warn({ queue: handler.queue, rerun: found.rerun }, `${handler.name} whose worker was lost run again`)
    if (found.failed.length > 0) work.log.warn({ queue: handler.queue, failed: found.failed }, `${handler.name} whose worker was lost on each of their ${MAX_ATTEMPTS} runs failed`)
  } catch (error) {
    work.log.warn({ err: error, queue: handler.queue }, `looking for ${handler.name} whose worker was lost failed`)
  }
}
