import type { Insertable, Selectable } from 'kysely'
import type { Db } from '../../db/connect.js'
import type { ProtectiveOrdersTable, ProtectiveStatus } from '../../db/schema.js'

export type ProtectiveRow = Selectable<ProtectiveOrdersTable>

/** Statuses of an order that may rest on the exchange (or whose answer we do not know yet). */
export const ACTIVE: readonly ProtectiveStatus[] = ['intent', 'open', 'unknown']

/** The strategy's next protective sequence number (the caller holds the strategy's lock: runs never share one). */
export async function nextProtectiveSeq(db: Db, strategyId: string): Promise<number> {
  const row = await db.selectFrom('protective_orders').select((eb) => eb.fn.max('seq').as('seq')).where('strategy_id', '=', strategyId).executeTakeFirst()
  return Number(row?.seq ?? 0) + 1
}

export async function insertProtective(db: Db, row: Insertable<ProtectiveOrdersTable>): Promise<void> {
  await db.insertInto('protective_orders').values(row).execute()
}

/** A row's new status (and what the exchange said: its algo id, why it failed). */
export async function markProtective(db: Db, clientAlgoId: string, change: { status: ProtectiveStatus; algoId?: string | number | undefined; lastError?: string | undefined; now: Date }): Promise<void> {
  await db
    .updateTable('protective_orders')
    .set({
      status: change.status,
      updated_at: change.now,
      ...(change.algoId !== undefined ? { algo_id: change.algoId } : {}),
      ...(change.lastError !== undefined ? { last_error: change.lastError } : {}),
    })
    .where('client_algo_id', '=', clientAlgoId)
    .execute()
}

/** One row by its clientAlgoId. */
export function protectiveRow(db: Db, clientAlgoId: string): Promise<ProtectiveRow | undefined> {
  return db.selectFrom('protective_orders').selectAll().where('client_algo_id', '=', clientAlgoId).executeTakeFirst()
}

/**
 * The strategy's protective orders that rest on the exchange or may (intent, open, unknown), oldest first;
 * one symbol's, or every symbol's. What a run's sync diffs against, and what a positions answer shows.
 */
export function activeProtective(db: Db, strategyId: string, symbol?: string): Promise<ProtectiveRow[]> {
  let query = db.selectFrom('protective_orders').selectAll().where('strategy_id', '=', strategyId).where('status', 'in', ACTIVE)
  if (symbol !== undefined) query = query.where('symbol', '=', symbol)
  return query.orderBy('seq').execute()
}
