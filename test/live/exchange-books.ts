import assert from 'node:assert/strict'
import type { BinanceAlgoOrder } from '../../src/trading/binance/algo-orders.js'
import type { BinanceOrder, BinanceTrade } from '../../src/trading/binance/trading-client.js'
import type { Account } from './live-accounts.js'
import type { PerpetuaNodes } from './perpetua-nodes.js'

/** One exchange order's fills (userTrades grouped by orderId): its client id, signed size and average price. */
export interface ExchangeFill {
  clientOrderId: string
  side: 'BUY' | 'SELL'
  qty: number
  price: number
  fee: number
  /** Its last fill's time (the exchange's clock). */
  time: number
}

/** What the account holds on the exchange for one symbol, as its holder reads it. */
export interface ExchangeBook {
  position: number
  orders: BinanceOrder[]
  algoOrders: BinanceAlgoOrder[]
  /** Every order that filled, from userTrades (the fills themselves), keyed by orderId. */
  fills: Map<number, ExchangeFill>
}

/** allOrders, allAlgoOrders, userTrades and the position of one account on one symbol. */
export async function exchangeBook(nodes: PerpetuaNodes, a: Account, symbol = 'BTCUSDT'): Promise<ExchangeBook> {
  const client = nodes.exchange(a)
  // The trades before the orders: an order that traded after the trades were read is listed all the same, and
  // every trade read names an order the later read lists (read together, a fill between the two broke that).
  const trades = await client.userTrades(symbol, { limit: 1000 })
  const [orders, position] = await Promise.all([client.allOrders(symbol, { limit: 1000 }), client.positions(symbol)])
  assert.ok(orders.kind === 'ok' && trades.kind === 'ok' && position.kind === 'ok', `the exchange answers its holder: ${JSON.stringify([orders, trades, position].filter((x) => x.kind !== 'ok'))}`)
  const all = await client.algo.all(symbol, { limit: 1000 })
  assert.ok(all.kind === 'ok', JSON.stringify(all))
  const algoOrders = all.value
  const byId = new Map(orders.value.map((o) => [o.orderId, o]))
  const fills = new Map<number, ExchangeFill>()
  for (const t of trades.value as BinanceTrade[]) {
    const order = byId.get(t.orderId)
    assert.ok(order, `trade ${t.id} names order ${t.orderId}, which allOrders lists`)
    const kept = fills.get(t.orderId) ?? { clientOrderId: order.clientOrderId, side: t.side as 'BUY' | 'SELL', qty: 0, price: 0, fee: 0, time: 0 }
    const qty = kept.qty + Number(t.qty)
    fills.set(t.orderId, { ...kept, price: (kept.price * kept.qty + Number(t.price) * Number(t.qty)) / qty, qty, fee: kept.fee + Number(t.commission), time: Math.max(kept.time, t.time) })
  }
  return { position: Number(position.value[0]?.positionAmt ?? 0), orders: orders.value, algoOrders, fills }
}

/** No client order id, and no clientAlgoId, went out twice. */
export function assertNoIdTwice(what: string, book: ExchangeBook): void {
  const ids = book.orders.map((o) => o.clientOrderId)
  assert.equal(new Set(ids).size, ids.length, `${what}: a client order id used twice: ${ids.join(' ')}`)
  const algoIds = book.algoOrders.map((o) => o.clientAlgoId)
  assert.equal(new Set(algoIds).size, algoIds.length, `${what}: a clientAlgoId used twice: ${algoIds.join(' ')}`)
}
