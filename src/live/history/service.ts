import type { Db } from '../../db/connect.js'
import { decodeCursor, encodeCursor, notACursor } from '../../http/cursor.js'
import { ownStrategy } from '../deploy.js'
import type { HistoryQuery, StrategyOrder, StrategyTrade } from '../schemas.js'
import { listOrders, listTrades, type OrderRow, type TradeRow } from './queries.js'

export interface Page<T> {
  data: T[]
  next_cursor: string | null
}

async function ownStrategyId(db: Db, userId: number, id: string): Promise<string> {
  return (await ownStrategy(db, userId, id, false)).id
}

/** GET /v1/strategies/{id}/orders (our addition): every run's orders, newest first. */
export async function pageOrders(db: Db, userId: number, id: string, query: HistoryQuery): Promise<Page<StrategyOrder>> {
  const strategyId = await ownStrategyId(db, userId, id)
  const limit = query.limit ?? 20
  const rows = await listOrders(db, strategyId, query.cursor !== undefined ? decodeCursor(query.cursor) : undefined, limit + 1)
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return { data: page.map(toOrder), next_cursor: rows.length > limit && last ? encodeCursor({ time: last.created_at, id: last.client_order_id }) : null }
}

/** GET /v1/strategies/{id}/trades (our addition): every run's closed trades, newest first. */
export async function pageTrades(db: Db, userId: number, id: string, query: HistoryQuery): Promise<Page<StrategyTrade>> {
  const strategyId = await ownStrategyId(db, userId, id)
  const limit = query.limit ?? 20
  let beforeId: number | undefined
  if (query.cursor !== undefined) {
    const position = decodeCursor(query.cursor)
    if (!/^\d{1,9}$/.test(position.id)) throw notACursor()
    beforeId = Number(position.id)
  }
  const rows = await listTrades(db, strategyId, beforeId, limit + 1)
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return { data: page.map(toTrade), next_cursor: rows.length > limit && last ? encodeCursor({ time: last.exit_time, id: String(last.id) }) : null }
}

function toOrder(row: OrderRow): StrategyOrder {
  return {
    client_order_id: row.client_order_id,
    run: row.run,
    symbol: row.symbol,
    status: row.status,
    reduce_only: row.reduce_only,
    target: row.target,
    side: row.side,
    qty: row.qty,
    price: row.price,
    fee: row.fee,
    created_at: row.created_at.toISOString(),
    filled_at: row.filled_at?.toISOString() ?? null,
    stated_at: row.stated_at?.toISOString() ?? null,
    exit_reason: row.exit_reason as StrategyOrder['exit_reason'],
  }
}

function toTrade(row: TradeRow): StrategyTrade {
  return {
    id: row.id,
    run: row.run,
    symbol: row.symbol,
    side: row.side,
    qty: row.qty,
    entry_time: row.entry_time.toISOString(),
    entry_price: row.entry_price,
    exit_time: row.exit_time.toISOString(),
    exit_price: row.exit_price,
    fee: row.fee,
    funding: row.funding,
    pnl: row.pnl,
    exit_reason: row.exit_reason,
  }
}
