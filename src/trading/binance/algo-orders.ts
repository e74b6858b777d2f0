import type { ExchangeAnswer } from './answer.js'
import { lookUpUntilSeen, type SignedCall } from './signed-call.js'

/**
 * A conditional order as Binance's Algo service returns it (POST, GET and DELETE /fapi/v1/algoOrder,
 * GET /fapi/v1/openAlgoOrders; research/protective-orders.md §1.2); only what we read is typed.
 */
export interface BinanceAlgoOrder {
  algoId: number
  clientAlgoId: string
  algoType: string
  orderType: string
  symbol: string
  side: string
  positionSide?: string
  quantity: string
  algoStatus: string
  triggerPrice: string
  price?: string
  workingType: string
  closePosition: boolean
  priceProtect: boolean
  reduceOnly: boolean
  activatePrice?: string
  callbackRate?: string
  createTime: number
  updateTime: number
  triggerTime?: number
  /** The query's: the triggered child order in the matching engine. */
  actualOrderId?: string
  [field: string]: unknown
}

export type AlgoOrderType = 'STOP_MARKET' | 'TAKE_PROFIT_MARKET' | 'TRAILING_STOP_MARKET'
export type WorkingType = 'MARK_PRICE' | 'CONTRACT_PRICE'

/** A protective conditional order to place: close-all (no quantity), or reduce-only with a quantity. */
export interface NewAlgoOrder {
  symbol: string
  side: 'BUY' | 'SELL'
  type: AlgoOrderType
  /** STOP_MARKET / TAKE_PROFIT_MARKET. */
  triggerPrice?: string | undefined
  quantity?: string | undefined
  closePosition?: boolean | undefined
  reduceOnly?: boolean | undefined
  workingType: WorkingType
  priceProtect?: boolean | undefined
  /** TRAILING_STOP_MARKET: where trailing starts (default: the latest price) and the callback in percent (0.1–20). */
  activatePrice?: string | undefined
  callbackRate?: string | undefined
  clientAlgoId: string
}

export type AlgoOrderRef = { algoId: number } | { clientAlgoId: string }

/**
 * Binance USD-M's Algo Order service (since 2025-12-09 the only home of STOP_MARKET, TAKE_PROFIT_MARKET and
 * TRAILING_STOP_MARKET; /fapi/v1/order refuses them with -4120). Placement goes out once; an unknown
 * outcome is looked up by clientAlgoId and stays unknown when not found, since Binance may not show an
 * accepted algo order for a while (freqtrade#12681).
 */
export class BinanceAlgoOrders {
  constructor(private readonly call: SignedCall) {}

  /** POST /fapi/v1/algoOrder (0 IP weight, 1 on each order counter). */
  async place(order: NewAlgoOrder): Promise<ExchangeAnswer<BinanceAlgoOrder>> {
    const answer = await this.call<BinanceAlgoOrder>(
      'POST',
      '/fapi/v1/algoOrder',
      {
        algoType: 'CONDITIONAL',
        symbol: order.symbol,
        side: order.side,
        type: order.type,
        triggerPrice: order.triggerPrice,
        quantity: order.quantity,
        closePosition: order.closePosition ? 'true' : undefined,
        reduceOnly: order.reduceOnly ? 'true' : undefined,
        workingType: order.workingType,
        priceProtect: order.priceProtect ? 'true' : undefined,
        activatePrice: order.activatePrice,
        callbackRate: order.callbackRate,
        clientAlgoId: order.clientAlgoId,
      },
      0,
    )
    // -4116: an open order already holds this client id, so an earlier send of this intent arrived.
    if (answer.kind === 'unknown' || (answer.kind === 'rejected' && answer.code === -4116)) {
      const why = answer.kind === 'unknown' ? answer.reason : 'the client algo id is already in use'
      return lookUpUntilSeen(() => this.get({ clientAlgoId: order.clientAlgoId }), `${why}; algo order ${order.clientAlgoId}`)
    }
    return answer
  }

  /** GET /fapi/v1/algoOrder (weight 1). */
  get(id: AlgoOrderRef): Promise<ExchangeAnswer<BinanceAlgoOrder>> {
    return this.call('GET', '/fapi/v1/algoOrder', { ...id }, 1)
  }

  /** DELETE /fapi/v1/algoOrder (weight 1): an untriggered order only; a triggered one is cancelled as its child order. */
  cancel(id: AlgoOrderRef): Promise<ExchangeAnswer<BinanceAlgoOrder>> {
    return this.call('DELETE', '/fapi/v1/algoOrder', { ...id }, 1)
  }

  /** GET /fapi/v1/allAlgoOrders (weight 5): the symbol's algo orders of any status created in a window of at most 7 days (one page). */
  all(symbol: string, params: { startTime?: number; endTime?: number; limit?: number } = {}): Promise<ExchangeAnswer<BinanceAlgoOrder[]>> {
    return this.call('GET', '/fapi/v1/allAlgoOrders', { symbol, ...params }, 5)
  }

  /** GET /fapi/v1/openAlgoOrders (weight 1 for one symbol, 40 for all): the untriggered conditional orders. */
  open(symbol?: string): Promise<ExchangeAnswer<BinanceAlgoOrder[]>> {
    return this.call('GET', '/fapi/v1/openAlgoOrders', { algoType: 'CONDITIONAL', symbol }, symbol ? 1 : 40)
  }
}
