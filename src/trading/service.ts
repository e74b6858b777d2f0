import crypto from 'node:crypto'
import type { UpstreamClient } from '../market/upstream-client.js'
import type { ExchangeAnswer } from './binance/answer.js'
import { BinanceTradingClient, type BinancePosition, type OrderRef } from './binance/trading-client.js'
import type { CancelOrder, CredentialsBody, Leverage, MarginType, OptionalSymbolBody, PlaceOrder, SymbolBody } from './schemas.js'

export interface TradingDeps {
  upstream: UpstreamClient
  now: () => number
}

/** What a body-credential endpoint answers: the exchange's value, its refusal, or why there is no answer. */
export type TradingResult =
  | { kind: 'ok'; value: unknown }
  | { kind: 'rejected'; code: number; msg: string }
  | { kind: 'failed'; detail: string; clientOrderId?: string }
  | { kind: 'invalid'; detail: string }

function clientFor(deps: TradingDeps, body: CredentialsBody): BinanceTradingClient {
  return new BinanceTradingClient(deps.upstream, { apiKey: body.api_key, apiSecret: body.api_secret }, deps.now)
}

/** Our client order ids for orders sent without one: `pa-` + 24 random hex (Binance's charset, ≤ 36). */
function newClientOrderId(): string {
  return `pa-${crypto.randomBytes(12).toString('hex')}`
}

function toResult(answer: ExchangeAnswer<unknown>, clientOrderId?: string): TradingResult {
  switch (answer.kind) {
    case 'ok':
      return { kind: 'ok', value: answer.value }
    case 'rejected':
      return { kind: 'rejected', code: answer.code, msg: answer.msg }
    case 'unavailable':
      return { kind: 'failed', detail: answer.reason }
    case 'unknown':
      return {
        kind: 'failed',
        detail: clientOrderId
          ? `the order's outcome is unknown (${answer.reason}); query client_order_id ${clientOrderId} before placing it again`
          : `the outcome is unknown (${answer.reason})`,
        ...(clientOrderId ? { clientOrderId } : {}),
      }
  }
}

/** POST /orders/auth: one order under a client order id, looked up (never re-sent) when its outcome is unknown. */
export async function placeOrder(deps: TradingDeps, body: PlaceOrder): Promise<TradingResult> {
  if (body.type === 'LIMIT' && body.price === undefined) return { kind: 'invalid', detail: 'price is required for a LIMIT order' }
  if (body.type === 'MARKET' && (body.price !== undefined || body.time_in_force !== undefined)) {
    return { kind: 'invalid', detail: 'price and time_in_force apply to LIMIT orders only' }
  }
  const clientOrderId = body.client_order_id ?? newClientOrderId()
  const answer = await clientFor(deps, body).placeOrder({
    symbol: body.symbol,
    side: body.side,
    type: body.type,
    quantity: body.quantity,
    price: body.price,
    timeInForce: body.type === 'LIMIT' ? (body.time_in_force ?? 'GTC') : undefined,
    reduceOnly: body.reduce_only,
    clientOrderId,
  })
  return toResult(answer, clientOrderId)
}

function orderRefOf(body: { order_id?: number | undefined; client_order_id?: string | undefined }): OrderRef | string {
  if ((body.order_id === undefined) === (body.client_order_id === undefined)) return 'give exactly one of order_id and client_order_id'
  return body.order_id !== undefined ? { orderId: body.order_id } : { clientOrderId: body.client_order_id! }
}

/** POST /orders/cancel/auth. */
export async function cancelOrder(deps: TradingDeps, body: CancelOrder): Promise<TradingResult> {
  const ref = orderRefOf(body)
  if (typeof ref === 'string') return { kind: 'invalid', detail: ref }
  return toResult(await clientFor(deps, body).cancelOrder(body.symbol, ref))
}

/** POST /orders/query/auth: one order by id, e.g. to settle an unknown outcome. */
export async function queryOrder(deps: TradingDeps, body: CancelOrder): Promise<TradingResult> {
  const ref = orderRefOf(body)
  if (typeof ref === 'string') return { kind: 'invalid', detail: ref }
  return toResult(await clientFor(deps, body).order(body.symbol, ref))
}

/**
 * POST /positions/close/auth: a reduce-only MARKET order for the symbol's whole one-way position, read
 * from the exchange just before (never from our memory), so it can only shrink the position.
 */
export async function closePosition(deps: TradingDeps, body: SymbolBody): Promise<TradingResult> {
  const client = clientFor(deps, body)
  const positions = await client.positions(body.symbol)
  if (positions.kind !== 'ok') return toResult(positions)
  const open = positions.value.find((row: BinancePosition) => row.symbol === body.symbol && Number(row.positionAmt) !== 0)
  if (!open) return { kind: 'invalid', detail: `there is no open position on ${body.symbol}` }
  if (open.positionSide !== 'BOTH') return { kind: 'invalid', detail: 'the account is in hedge mode; only one-way positions can be closed here' }
  const amount = open.positionAmt
  const clientOrderId = newClientOrderId()
  const answer = await client.placeOrder({
    symbol: body.symbol,
    side: amount.startsWith('-') ? 'BUY' : 'SELL',
    type: 'MARKET',
    quantity: amount.replace(/^-/, ''),
    reduceOnly: true,
    clientOrderId,
  })
  return toResult(answer, clientOrderId)
}

export async function setLeverage(deps: TradingDeps, body: Leverage): Promise<TradingResult> {
  return toResult(await clientFor(deps, body).setLeverage(body.symbol, body.leverage))
}

export async function setMarginType(deps: TradingDeps, body: MarginType): Promise<TradingResult> {
  return toResult(await clientFor(deps, body).setMarginType(body.symbol, body.margin_type))
}

export async function positions(deps: TradingDeps, body: OptionalSymbolBody): Promise<TradingResult> {
  return toResult(await clientFor(deps, body).positions(body.symbol))
}

export async function openOrders(deps: TradingDeps, body: OptionalSymbolBody): Promise<TradingResult> {
  return toResult(await clientFor(deps, body).openOrders(body.symbol))
}

export async function balances(deps: TradingDeps, body: CredentialsBody): Promise<TradingResult> {
  return toResult(await clientFor(deps, body).balances())
}
