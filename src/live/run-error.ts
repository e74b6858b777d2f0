import { recordEvent } from '../events/outbox.js'
import type { Db } from '../db/connect.js'
import { lockStrategies } from '../strategies/queries.js'
import { cancelOpenOrders, endRun, type RunRow } from './queries.js'
import { publishMessage, publishStatus } from './stream/status-messages.js'

/**
 * Moves a run's strategy into error (docs/decisions/live.md, "Moves into stopped and error"), inside the
 * caller's transaction: the run ends with its position left as it is, its pending intents are
 * cancelled, and strategy.error plus the stream's error and status messages go out at commit. The user
 * gets out by editing the strategy (back to draft). For the runner's causes only: a position it cannot
 * explain, a revoked key, repeated margin refusals.
 */
export async function enterError(trx: Db, run: RunRow, error: { code: string; message: string }, now: Date): Promise<void> {
  await lockStrategies(trx, [run.strategy_id]) // the strategy before its run (docs/decisions/live.md, "Lock order")
  await cancelOpenOrders(trx, run.strategy_id, run.run)
  await endRun(trx, run.strategy_id, run.run, now)
  await markError(trx, run, error, now)
}

/**
 * The error move once the run has ended (the caller decides how: a live run's unanswered orders are
 * never cancelled unseen): status error, strategy.error, and the stream's error and status messages.
 */
export async function markError(trx: Db, run: RunRow, error: { code: string; message: string }, now: Date): Promise<void> {
  await trx
    .updateTable('strategies')
    .set({ status: 'error', updated_at: now, last_error_code: error.code, last_error_message: error.message, last_error_at: now })
    .where('id', '=', run.strategy_id)
    .where('status', '=', 'deployed')
    .execute()
  const data = { strategy_id: run.strategy_id, code: error.code, message: error.message }
  await recordEvent(trx, { userId: run.user_id, type: 'strategy.error', data, at: now })
  await publishMessage(trx, { type: 'error', strategy_id: run.strategy_id, time: now.toISOString(), data })
  await publishStatus(trx, run.strategy_id, now)
}
