import { signedQuery } from '../../exchange-keys/binance-signer.js'
import { REQUEST_DEADLINE_MS } from '../../market/market-data.js'
import { isUpstreamUnavailable, mayHaveArrived, type UpstreamClient } from '../../market/upstream-client.js'
import { BinanceAlgoOrders } from './algo-orders.js'
import { classifyAnswer, type ExchangeAnswer } from './answer.js'
import { lookUpUntilSeen, type Method, type Params } from './signed-call.js'

export interface ExchangeCredentials {
  apiKey: string
  apiSecret: string
}

/** A USD-M order as Binance returns it (POST, GET and DELETE /fapi/v1/order); only what we read is typed. */
export interface BinanceOrder {
  orderId: number
  clientOrderId: string
  symbol: string
  status: string
  side: string
  type: string
  origQty: string
  executedQty: string
  avgPrice?: string
  price: string
  reduceOnly: boolean
  updateTime: number
  [field: string]: unknown
}

/** One row of GET /fapi/v2/positionRisk. */
export interface BinancePosition {
  symbol: string
  positionAmt: string
  entryPrice: string
  markPrice: string
  unRealizedProfit: string
  leverage: string
  marginType: string
  positionSide: string
  [field: string]: unknown
}

/** One row of GET /fapi/v1/userTrades: a fill of an order (by the exchange's orderId; it carries no client order id). */
export interface BinanceTrade {
  id: number
  orderId: number
  symbol: string
  side: string
  price: string
  qty: string
  commission: string
  time: number
  [field: string]: unknown
}

/**
 * Binance USD-M's signed trading and account endpoints for one set of credentials, through the
 * upstream client (its pool, weight budget and back-off). Reads may be retried by the caller; writes
 * go out exactly once (UpstreamClient.sendOnce) and answer an ExchangeAnswer that keeps an unknown
 * outcome unknown.
 */
export class BinanceTradingClient {
  /** The Algo Order service: protective (conditional) orders. */
  readonly algo = new BinanceAlgoOrders((method, path, params, weight, signed) => this.call(method, path, params, weight, signed))

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly credentials: ExchangeCredentials,
    private readonly now: () => number,
  ) {}

  account(): Promise<ExchangeAnswer<Record<string, unknown>>> {
    return this.call('GET', '/fapi/v2/account', {}, 5)
  }

  balances(): Promise<ExchangeAnswer<Record<string, unknown>[]>> {
    return this.call('GET', '/fapi/v2/balance', {}, 5)
  }

  positions(symbol?: string): Promise<ExchangeAnswer<BinancePosition[]>> {
    return this.call('GET', '/fapi/v2/positionRisk', { symbol }, 5)
  }

  openOrders(symbol?: string): Promise<ExchangeAnswer<BinanceOrder[]>> {
    return this.call('GET', '/fapi/v1/openOrders', { symbol }, symbol ? 1 : 40)
  }

  order(symbol: string, id: OrderRef): Promise<ExchangeAnswer<BinanceOrder>> {
    return this.call('GET', '/fapi/v1/order', { symbol, ...orderRef(id) }, 1)
  }

  /** GET /fapi/v1/allOrders (weight 5): the symbol's recent orders, a second way to find one by client order id. */
  allOrders(symbol: string, params: { startTime?: number; limit?: number } = {}): Promise<ExchangeAnswer<BinanceOrder[]>> {
    return this.call('GET', '/fapi/v1/allOrders', { symbol, ...params }, 5)
  }

  cancelOrder(symbol: string, id: OrderRef): Promise<ExchangeAnswer<BinanceOrder>> {
    return this.call('DELETE', '/fapi/v1/order', { symbol, ...orderRef(id) }, 1)
  }

  setLeverage(symbol: string, leverage: number): Promise<ExchangeAnswer<{ leverage: number; maxNotionalValue: string; symbol: string }>> {
    return this.call('POST', '/fapi/v1/leverage', { symbol, leverage }, 1)
  }

  setMarginType(symbol: string, marginType: 'ISOLATED' | 'CROSSED'): Promise<ExchangeAnswer<{ code: number; msg: string }>> {
    return this.call('POST', '/fapi/v1/marginType', { symbol, marginType }, 1)
  }

  /** GET /fapi/v1/leverageBracket (weight 1): the account's own margin tiers of the symbol (a list of one row; parsed by market/leverage-brackets). */
  leverageBrackets(symbol: string): Promise<ExchangeAnswer<unknown>> {
    return this.call('GET', '/fapi/v1/leverageBracket', { symbol }, 1)
  }

  positionMode(): Promise<ExchangeAnswer<{ dualSidePosition: boolean }>> {
    return this.call('GET', '/fapi/v1/positionSide/dual', {}, 30)
  }

  userTrades(symbol: string, params: { orderId?: number; fromId?: number; startTime?: number; limit?: number } = {}): Promise<ExchangeAnswer<BinanceTrade[]>> {
    return this.call('GET', '/fapi/v1/userTrades', { symbol, ...params }, 5)
  }

  /** POST /fapi/v1/listenKey (USER_STREAM: the API key only): the account's active key, extended 60 minutes, or a new one. */
  openListenKey(): Promise<ExchangeAnswer<{ listenKey: string }>> {
    return this.call('POST', '/fapi/v1/listenKey', {}, 1, false)
  }

  /** PUT /fapi/v1/listenKey: extends the active key 60 minutes; -1125 when the account has none (it expired). */
  keepAliveListenKey(): Promise<ExchangeAnswer<{ listenKey: string }>> {
    return this.call('PUT', '/fapi/v1/listenKey', {}, 1, false)
  }

  /**
   * Places one order (POST /fapi/v1/order, 0 IP weight, newOrderRespType RESULT) under its client order
   * id. An unknown outcome is then looked up by that id; an order not found (or a lookup that fails)
   * keeps the answer unknown: the caller must not send the intent again under another id.
   */
  async placeOrder(order: NewOrder): Promise<ExchangeAnswer<BinanceOrder>> {
    const params: Params = {
      symbol: order.symbol,
      side: order.side,
      type: order.type,
      quantity: order.quantity,
      price: order.price,
      timeInForce: order.timeInForce,
      reduceOnly: order.reduceOnly ? 'true' : undefined,
      newClientOrderId: order.clientOrderId,
      newOrderRespType: 'RESULT',
    }
    const answer = await this.call<BinanceOrder>('POST', '/fapi/v1/order', params, 0)
    // -4116: an open order already has this id, so an earlier send of this intent arrived.
    if (answer.kind === 'unknown' || (answer.kind === 'rejected' && answer.code === -4116)) {
      const why = answer.kind === 'unknown' ? answer.reason : 'the client order id is already in use'
      return lookUpUntilSeen(() => this.order(order.symbol, { clientOrderId: order.clientOrderId }), `${why}; order ${order.clientOrderId}`)
    }
    return answer
  }

  private async call<T>(method: Method, path: string, params: Params, weight: number, signed = true): Promise<ExchangeAnswer<T>> {
    const defined: Record<string, string | number> = {}
    for (const [name, value] of Object.entries(params)) if (value !== undefined) defined[name] = typeof value === 'boolean' ? String(value) : value
    const query = signed ? signedQuery(this.credentials.apiSecret, defined, this.now()) : new URLSearchParams(defined as Record<string, string>).toString()
    try {
      const response = await this.upstream.sendOnce(
        {
          method,
          host: 'api',
          path,
          query,
          weight,
          headers: { 'x-mbx-apikey': this.credentials.apiKey },
        },
        performance.now() + REQUEST_DEADLINE_MS,
      )
      return classifyAnswer<T>(response.status, response.body)
    } catch (error) {
      if (!isUpstreamUnavailable(error)) throw error
      return mayHaveArrived(error) && method !== 'GET' ? { kind: 'unknown', reason: error.message } : { kind: 'unavailable', reason: error.message }
    }
  }
}

export type OrderRef = { orderId: number } | { clientOrderId: string }

export interface NewOrder {
  symbol: string
  side: 'BUY' | 'SELL'
  type: 'MARKET' | 'LIMIT'
  quantity: string
  price?: string | undefined
  timeInForce?: 'GTC' | 'IOC' | 'FOK' | 'GTX' | undefined
  reduceOnly?: boolean | undefined
  clientOrderId: string
}

function orderRef(id: OrderRef): Params {
  return 'orderId' in id ? { orderId: id.orderId } : { origClientOrderId: id.clientOrderId }
}
