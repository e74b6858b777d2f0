import type { Selectable } from 'kysely'
import type { Db } from '../../db/connect.js'
import type { StrategyOrdersTable, StrategyTradesTable } from '../../db/schema.js'
import type { KeysetPosition } from '../../http/cursor.js'

export type OrderRow = Selectable<StrategyOrdersTable>
export type TradeRow = Selectable<StrategyTradesTable>

/** A strategy's orders across runs, newest first (strategy_orders_list_idx). */
export async function listOrders(db: Db, strategyId: string, after: KeysetPosition | undefined, limit: number): Promise<OrderRow[]> {
  let query = db.selectFrom('strategy_orders').selectAll().where('strategy_id', '=', strategyId)
  if (after) {
    const { time, id } = after
    query = query.where((eb) => eb.or([eb('created_at', '<', time), eb.and([eb('created_at', '=', time), eb('client_order_id', '<', id)])]))
  }
  return query.orderBy('created_at', 'desc').orderBy('client_order_id', 'desc').limit(limit).execute()
}

/** A strategy's closed trades across runs, newest first: ids are numbered in the order trades close. */
export async function listTrades(db: Db, strategyId: string, beforeId: number | undefined, limit: number): Promise<TradeRow[]> {
  let query = db.selectFrom('strategy_trades').selectAll().where('strategy_id', '=', strategyId)
  if (beforeId !== undefined) query = query.where('id', '<', beforeId)
  return query.orderBy('id', 'desc').limit(limit).execute()
}
