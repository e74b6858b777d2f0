import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { BinanceError, invalidSymbol } from '../../common/errors.js'
import { integer, limit, type Query, required, text, timeRange } from '../../common/params.js'
import type { Account, Order } from '../accounts/account.js'
import { signedRoute, type TradingDeps } from '../trading-context.js'
import { lostAnswer, unknownCancel, unknownOrder } from '../venue.js'
import { parseOrderRequest } from './order-request.js'
import { orderView, tradeView } from './order-views.js'

/** POST/GET/DELETE /fapi/v1/order, DELETE /fapi/v1/allOpenOrders, GET openOrder(s), allOrders and userTrades. */
export function orderRoutes(app: FastifyInstance, deps: TradingDeps): void {
  const { venue } = deps
  const info = (symbol: string) => deps.market.get(symbol)!.info
  const symbolParam = (params: Query) => {
    const name = required(params, 'symbol')
    if (!deps.market.get(name)) throw invalidSymbol()
    return name
  }

  // Weight 0 on the IP limit, 1 on each of the account's order counters (Binance's New Order).
  signedRoute(app, deps, 'POST', '/fapi/v1/order', 0, async ({ account, params, request, reply }) => {
    const counts = deps.orderCounter.charge(account.apiKey)
    reply.header('x-mbx-order-count-10s', String(counts.tenSeconds)).header('x-mbx-order-count-1m', String(counts.minute))
    const order = parseOrderRequest(params, (name) => venue.tradable(name)?.info, (symbol) => venue.lastPrice(venue.tradable(symbol.symbol)!))
    const late = deps.faults.take(request.url, 'late', account.apiKey)
    if (late) await sleep(late.latencyMs!)
    const { ack, result } = venue.place(account, order)
    const fault = deps.faults.take(request.url, 'execution', account.apiKey)
    if (fault?.executeThen !== undefined) throw lostAnswer(fault.executeThen)
    return orderView(order.symbol, order.respType === 'RESULT' ? result : ack, false)
  })

  signedRoute(app, deps, 'GET', '/fapi/v1/order', 1, ({ account, params, request }) => {
    const found = findOrder(account, symbolParam(params), params)
    if (!found || deps.faults.take(request.url, 'forget', account.apiKey)) throw unknownOrder()
    return orderView(info(found.symbol), found, true)
  })

  signedRoute(app, deps, 'GET', '/fapi/v1/openOrder', 1, ({ account, params }) => {
    const found = findOrder(account, symbolParam(params), params)
    if (!found || !account.open.has(found.orderId)) throw new BinanceError(400, -2013, 'Order does not exist.')
    return orderView(info(found.symbol), found, true)
  })

  signedRoute(app, deps, 'DELETE', '/fapi/v1/order', 1, ({ account, params, request }) => {
    const found = findOrder(account, symbolParam(params), params)
    if (found && deps.faults.take(request.url, 'forget', account.apiKey)) throw unknownCancel()
    const canceled = venue.cancel(account, found)
    return orderView(info(canceled.symbol), canceled, false)
  })

  signedRoute(app, deps, 'DELETE', '/fapi/v1/allOpenOrders', 1, ({ account, params }) => {
    venue.cancelAll(account, symbolParam(params))
    return { code: 200, msg: 'The operation of cancel all open order is done.' }
  })

  const openWeight = (request: { query: unknown; body: unknown }) =>
    typeof (request.query as Query).symbol === 'string' || (typeof request.body === 'string' && request.body.includes('symbol=')) ? 1 : 40
  signedRoute(app, deps, 'GET', '/fapi/v1/openOrders', openWeight, ({ account, params }) => {
    const symbol = text(params, 'symbol')
    if (symbol !== undefined && !deps.market.get(symbol)) throw invalidSymbol()
    return [...account.open.values()].filter((o) => symbol === undefined || o.symbol === symbol).map((o) => orderView(info(o.symbol), o, true))
  })

  signedRoute(app, deps, 'GET', '/fapi/v1/allOrders', 5, ({ account, params }) => {
    const symbol = symbolParam(params)
    const fromId = integer(params, 'orderId')
    const { startTime, endTime } = timeRange(params)
    const count = limit(params, 500, 1000)
    const rows = [...account.orders.values()].filter(
      (o) => o.symbol === symbol && (fromId === undefined || o.orderId >= fromId) && (startTime === undefined || o.time >= startTime) && (endTime === undefined || o.time <= endTime),
    )
    // Oldest first; from an orderId the first `limit`, else the latest `limit`.
    return (fromId === undefined ? rows.slice(-count) : rows.slice(0, count)).map((o) => orderView(info(symbol), o, true))
  })

  signedRoute(app, deps, 'GET', '/fapi/v1/userTrades', 5, ({ account, params }) => {
    const symbol = symbolParam(params)
    const orderId = integer(params, 'orderId')
    const fromId = integer(params, 'fromId')
    const { startTime, endTime } = timeRange(params)
    const count = limit(params, 500, 1000)
    const rows = account.trades.filter(
      (t) =>
        t.symbol === symbol &&
        (orderId === undefined || t.orderId === orderId) &&
        (fromId === undefined || t.id >= fromId) &&
        (startTime === undefined || t.time >= startTime) &&
        (endTime === undefined || t.time <= endTime),
    )
    return (fromId === undefined ? rows.slice(-count) : rows.slice(0, count)).map((t) => tradeView(info(symbol), t))
  })
}

/** The order named by orderId or origClientOrderId (the open one with that id first, else the latest). */
function findOrder(account: Account, symbol: string, params: Query): Order | undefined {
  const orderId = integer(params, 'orderId')
  const clientId = text(params, 'origClientOrderId')
  if (orderId === undefined && clientId === undefined) {
    throw new BinanceError(400, -1102, "Param 'origClientOrderId' or 'orderId' must be sent, but both were empty/null!")
  }
  if (orderId !== undefined) {
    const order = account.orders.get(orderId)
    return order && order.symbol === symbol ? order : undefined
  }
  for (const order of account.open.values()) if (order.clientOrderId === clientId && order.symbol === symbol) return order
  let latest: Order | undefined
  for (const order of account.orders.values()) if (order.clientOrderId === clientId && order.symbol === symbol) latest = order
  return latest
}
