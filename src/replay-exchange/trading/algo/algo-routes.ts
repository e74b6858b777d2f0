import type { FastifyInstance } from 'fastify'
import { BinanceError, invalidData, invalidSymbol } from '../../common/errors.js'
import { integer, type Query, required, text, timeRange } from '../../common/params.js'
import type { Account } from '../accounts/account.js'
import { lostAnswer } from '../venue.js'
import { signedRoute, type TradingDeps } from '../trading-context.js'
import type { AlgoBook } from './algo-book.js'
import type { AlgoOrder } from './algo-order.js'
import { parseAlgoRequest } from './algo-request.js'
import { algoOrderView, algoQueryView } from './algo-views.js'

/** allAlgoOrders looks back at most 7 days ("limited to 7 days by Binance", nautilus futures/execution.py). */
const ALL_ALGO_WINDOW_MS = 7 * 86_400_000

/**
 * Binance's Algo Order endpoints: POST/GET/DELETE /fapi/v1/algoOrder, GET openAlgoOrders and
 * allAlgoOrders, DELETE algoOpenOrders. Weights as New Order (0 IP, 1 on each order counter) for
 * POST, 1 for query and cancel, 1 (40 without symbol) for openAlgoOrders, 5 for allAlgoOrders.
 */
export function algoRoutes(app: FastifyInstance, deps: TradingDeps, book: AlgoBook): void {
  const { venue } = deps
  const info = (symbol: string) => deps.market.get(symbol)!.info
  const symbolParam = (params: Query, needed: boolean) => {
    const name = needed ? required(params, 'symbol') : text(params, 'symbol')
    if (name !== undefined && !deps.market.get(name)) throw invalidSymbol()
    return name
  }

  signedRoute(app, deps, 'POST', '/fapi/v1/algoOrder', 0, ({ account, params, request, reply }) => {
    const counts = deps.orderCounter.charge(account.apiKey)
    reply.header('x-mbx-order-count-10s', String(counts.tenSeconds)).header('x-mbx-order-count-1m', String(counts.minute))
    const parsed = parseAlgoRequest(params, (name) => venue.tradable(name)?.info)
    const order = book.place(account, parsed, request.url)
    const fault = deps.faults.take(request.url, 'execution', account.apiKey)
    if (fault?.executeThen !== undefined) throw lostAnswer(fault.executeThen)
    return algoOrderView(parsed.symbol, order)
  })

  signedRoute(app, deps, 'GET', '/fapi/v1/algoOrder', 1, ({ account, params }) => {
    const order = findAlgo(account, params)
    if (!order || !book.visible(order)) throw new BinanceError(400, -2013, 'Order does not exist.')
    return algoQueryView(info(order.symbol), order, book.child(account, order))
  })

  signedRoute(app, deps, 'DELETE', '/fapi/v1/algoOrder', 1, ({ account, params }) => {
    const order = book.cancel(account, findAlgo(account, params))
    return { algoId: order.algoId, clientAlgoId: order.clientAlgoId, code: '200', msg: 'success' }
  })

  signedRoute(app, deps, 'DELETE', '/fapi/v1/algoOpenOrders', 1, ({ account, params }) => {
    book.cancelAll(account, symbolParam(params, true)!)
    return { code: 200, msg: 'The operation of cancel all open order is done.' }
  })

  const openWeight = (request: { query: unknown; body: unknown }) =>
    typeof (request.query as Query).symbol === 'string' || (typeof request.body === 'string' && request.body.includes('symbol=')) ? 1 : 40
  signedRoute(app, deps, 'GET', '/fapi/v1/openAlgoOrders', openWeight, ({ account, params }) => {
    const symbol = symbolParam(params, false)
    const algoType = text(params, 'algoType')
    if (algoType !== undefined && algoType !== 'CONDITIONAL') throw invalidData('algoType')
    const algoId = integer(params, 'algoId')
    return [...account.openAlgo.values()]
      .filter((o) => book.visible(o) && (symbol === undefined || o.symbol === symbol) && (algoId === undefined || o.algoId === algoId))
      .map((o) => algoOrderView(info(o.symbol), o))
  })

  signedRoute(app, deps, 'GET', '/fapi/v1/allAlgoOrders', 5, ({ account, params }) => {
    const symbol = symbolParam(params, true)!
    const algoId = integer(params, 'algoId')
    const { startTime, endTime } = timeRange(params)
    const page = integer(params, 'page') ?? 1
    if (page < 1) throw invalidData('page')
    const count = integer(params, 'limit') ?? 500
    if (count < 1 || count > 1000) throw invalidData('limit')
    // Binance's window: at most 7 days; without times, the last 7 days; with one, 7 days from (or to) it.
    const end = endTime ?? (startTime !== undefined ? startTime + ALL_ALGO_WINDOW_MS : venue.now())
    const start = startTime ?? end - ALL_ALGO_WINDOW_MS
    if (end - start > ALL_ALGO_WINDOW_MS) throw new BinanceError(400, -4165, 'Invalid time interval, maximum time interval is 7 days')
    const rows = [...account.algoOrders.values()].filter(
      (o) => o.symbol === symbol && book.visible(o) && (algoId === undefined ? o.createTime >= start && o.createTime <= end : o.algoId >= algoId),
    )
    return rows.slice((page - 1) * count, page * count).map((o) => algoQueryView(info(symbol), o, book.child(account, o)))
  })
}

/** The algo order named by algoId or clientAlgoId (the open one with that id first, else the latest). */
function findAlgo(account: Account, params: Query): AlgoOrder | undefined {
  const algoId = integer(params, 'algoId')
  const clientId = text(params, 'clientAlgoId')
  if (algoId === undefined && clientId === undefined) throw new BinanceError(400, -1102, "Param 'clientAlgoId' or 'algoId' must be sent, but both were empty/null!")
  if (algoId !== undefined) return account.algoOrders.get(algoId)
  for (const order of account.openAlgo.values()) if (order.clientAlgoId === clientId) return order
  let latest: AlgoOrder | undefined
  for (const order of account.algoOrders.values()) if (order.clientAlgoId === clientId) latest = order
  return latest
}
