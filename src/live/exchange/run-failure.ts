import type { StrategyErrorCode } from '../../custom-templates/sandbox/strategy-error.js'
import type { Db } from '../../db/connect.js'
import { retryingTransaction } from '../../db/retry.js'
import { lockStrategies } from '../../strategies/queries.js'
import type { RunRow } from '../queries.js'
import { markError } from '../run-error.js'

/** Why a live run cannot go on by itself: the strategy moves to error (docs/decisions/live.md, "Moves into error"). */
/** A user's module failing (STRATEGY_*) is a cause too: the run cannot go on without a fixed module. */
/** START_FAILED: the runner could not start three times in a row (runner/start-failures.ts). */
export type RunFailureCode = 'KEY_REVOKED' | 'POSITION_MISMATCH' | 'FOREIGN_ORDER' | 'MARGIN_REFUSED' | 'HEDGE_MODE' | 'ORDER_REFUSED' | 'START_FAILED' | StrategyErrorCode

export class RunFailure extends Error {
  constructor(
    readonly code: RunFailureCode,
    message: string,
  ) {
    super(message)
    this.name = 'RunFailure'
  }
}

/** Binance codes that mean the key no longer works: -2015 invalid key/IP/permissions, -2014 bad key format, -1022 bad signature. */
export const KEY_REFUSED = new Set([-2015, -2014, -1022])

/**
 * Ends the run (its unanswered orders left to be looked up) and moves its strategy from deployed to error, in one transaction,
 * if this owner still holds the run (a pause or a takeover meanwhile wins). Returns whether it did.
 */
export async function failRun(db: Db, run: RunRow, owner: string, failure: RunFailure, now: Date): Promise<boolean> {
  return retryingTransaction(db, async (trx) => {
    await lockStrategies(trx, [run.strategy_id]) // the strategy before its run (docs/decisions/live.md, "Lock order")
    const ended = await trx
      .updateTable('strategy_runs')
      .set({ ended_at: now, lease_owner: null, lease_expires_at: null })
      .where('strategy_id', '=', run.strategy_id)
      .where('run', '=', run.run)
      .where('lease_owner', '=', owner)
      .where('ended_at', 'is', null)
      .executeTakeFirst()
    if (Number(ended.numUpdatedRows) === 0) return false
    await markError(trx, run, failure, now)
    return true
  })
}
