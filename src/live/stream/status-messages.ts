import { sql } from 'kysely'
import type { Db } from '../../db/connect.js'
import { toStrategy } from '../../strategies/service.js'
import { findStrategyById, type StrategyRow } from '../../strategies/queries.js'

/** The NOTIFY channel of strategy stream messages: any process's runner publishes, every process fans out. */
export const STRATEGY_CHANNEL = 'perpetua_strategy'

export type StreamMessageType = 'status' | 'order' | 'position_opened' | 'position_closed' | 'error'

/** A status stream message (DESIGN §6). */
export interface StreamMessage {
  type: StreamMessageType
  strategy_id: string
  time: string
  data: Record<string, unknown>
}

/**
 * What travels on the channel: a message, with a token a waiting publisher recognises (pause); or an API
 * key's revocation or rotation, announced by the api_keys trigger (migration 0021) at its commit.
 */
export type Notification = { message: StreamMessage; token?: string } | { revoked: KeyRevocation }

/** An API key revoked (or deleted), or rotated to the secret of `version` (KeyDirectory keyVersion). */
export type KeyRevocation = { key_id: string; reason: 'revoked' } | { key_id: string; reason: 'rotated'; version: string }

/**
 * Publishes a stream message inside the caller's transaction: PostgreSQL delivers NOTIFY only when
 * the transaction commits, in commit order, so clients never hear of a fill that was rolled back.
 * Payloads stay far below NOTIFY's 8000-byte limit (the largest message, position_closed, is ~400 bytes).
 */
export async function publishMessage(trx: Db, message: StreamMessage, token?: string): Promise<void> {
  const payload: Notification = token === undefined ? { message } : { message, token }
  await sql`SELECT pg_notify(${STRATEGY_CHANNEL}, ${JSON.stringify(payload)})`.execute(trx)
}

/** Publishes many messages in one statement, in the order given (a function scan yields the array in order). */
export async function publishMessages(trx: Db, messages: readonly StreamMessage[]): Promise<void> {
  if (messages.length === 0) return
  const payloads = messages.map((message) => JSON.stringify({ message } satisfies Notification))
  await sql`SELECT pg_notify(${STRATEGY_CHANNEL}, p) FROM unnest(${payloads}::text[]) AS m(p)`.execute(trx)
}

/** The data of a status message: the strategy's status and stats as GET /v1/strategies/{id} shows them. */
export function statusData(row: StrategyRow): Record<string, unknown> {
  const { status, deployed_at, stats, last_error, mode, exchange_key, last_bar_at } = toStrategy(row)
  return { status, deployed_at, stats, last_error, mode, exchange_key, last_bar_at }
}

/** A status message for the strategy as it is now in `trx`. */
export async function publishStatus(trx: Db, strategyId: string, now: Date, token?: string): Promise<void> {
  const row = await findStrategyById(trx, strategyId)
  await publishMessage(trx, { type: 'status', strategy_id: strategyId, time: now.toISOString(), data: statusData(row) }, token)
}
