import type { Db } from '../../db/connect.js'
import { AppError } from '../../http/errors.js'
import { failRun, RunFailure } from '../exchange/run-failure.js'
import type { RunRow } from '../queries.js'

/** Starts that may fail in a row (on any node) before the strategy moves to error: a cause that outlives three leases is not passing. */
export const START_ATTEMPTS = 3

/**
 * Counts a failed start of a run this owner still holds; the third in a row ends the run and moves its
 * strategy to error (last_error START_FAILED with the reason, strategy.error, the stream's error message)
 * instead of the run being claimed again every lease. Returns whether it did.
 */
export async function recordStartFailure(db: Db, run: RunRow, owner: string, error: unknown, now: Date): Promise<boolean> {
  const counted = await db
    .updateTable('strategy_runs')
    .set((eb) => ({ start_failures: eb('start_failures', '+', 1) }))
    .where('strategy_id', '=', run.strategy_id)
    .where('run', '=', run.run)
    .where('lease_owner', '=', owner)
    .where('ended_at', 'is', null)
    .returning('start_failures')
    .executeTakeFirst()
  if (!counted || counted.start_failures < START_ATTEMPTS) return false
  const failure = new RunFailure('START_FAILED', `the run could not start ${counted.start_failures} times in a row; the last time: ${startReason(error)}`)
  return failRun(db, run, owner, failure, now)
}

/** A start that succeeded: the count starts again (one statement, only when there was one). */
export async function resetStartFailures(db: Db, run: RunRow, owner: string): Promise<void> {
  if (run.start_failures === 0) return
  await db.updateTable('strategy_runs').set({ start_failures: 0 }).where('strategy_id', '=', run.strategy_id).where('run', '=', run.run).where('lease_owner', '=', owner).execute()
}

/** What the trader reads: our own errors' messages as they are; anything else by its message alone (never a stack). */
function startReason(error: unknown): string {
  if (error instanceof AppError) return error.message
  const message = error instanceof Error ? error.message : String(error)
  return message.length > 300 ? `${message.slice(0, 300)}…` : message
}
