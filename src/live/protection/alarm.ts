import type { Db } from '../../db/connect.js'
import { retryingTransaction } from '../../db/retry.js'
import { recordEvent } from '../../events/outbox.js'
import { lockStrategies } from '../../strategies/queries.js'
import { publishMessage } from '../stream/status-messages.js'

/** The code of a protection alarm in last_error, strategy.error and the stream's error message. */
export const PROTECTION_LOST = 'PROTECTION_LOST'

/**
 * A live position lost (or could not get) a protective order on the exchange: the strategy's last_error,
 * strategy.error and an `error` stream message, in one transaction; the strategy stays deployed (the run
 * acts on it itself: closes the position or places the order again). Not the error move (run-error.ts).
 */
export async function raiseProtectionAlarm(db: Db, run: { strategy_id: string; user_id: number }, message: string, now: Date): Promise<void> {
  await retryingTransaction(db, async (trx) => {
    await lockStrategies(trx, [run.strategy_id]) // the strategy row first (docs/decisions/live.md, "Lock order")
    await trx
      .updateTable('strategies')
      .set({ last_error_code: PROTECTION_LOST, last_error_message: message, last_error_at: now })
      .where('id', '=', run.strategy_id)
      .execute()
    const data = { strategy_id: run.strategy_id, code: PROTECTION_LOST, message }
    await recordEvent(trx, { userId: run.user_id, type: 'strategy.error', data, at: now })
    await publishMessage(trx, { type: 'error', strategy_id: run.strategy_id, time: now.toISOString(), data })
  })
}
