/**
 * A conditional order of Binance's Algo Service (POST /fapi/v1/algoOrder, since 2025-12-09): it
 * waits outside the matching engine until its trigger holds, then places one child order there.
 * Statuses as the ALGO_UPDATE page names them: NEW (waiting), TRIGGERING (condition met, forwarded),
 * TRIGGERED (the child is in the matching engine), FINISHED (the child filled or ended), CANCELED,
 * EXPIRED (by the system: a close-all order whose position closed), REJECTED (the child was refused).
 */

export type AlgoStatus = 'NEW' | 'TRIGGERING' | 'TRIGGERED' | 'FINISHED' | 'CANCELED' | 'EXPIRED' | 'REJECTED'
export type AlgoOrderType = 'STOP_MARKET' | 'TAKE_PROFIT_MARKET' | 'STOP' | 'TAKE_PROFIT' | 'TRAILING_STOP_MARKET'
export type WorkingType = 'MARK_PRICE' | 'CONTRACT_PRICE'

export const ALGO_TYPES: readonly AlgoOrderType[] = ['STOP_MARKET', 'TAKE_PROFIT_MARKET', 'STOP', 'TAKE_PROFIT', 'TRAILING_STOP_MARKET']

/** "Reach max stop order limit.": 200 open conditional orders per account, across symbols (change log 2025-12-29). */
export const MAX_OPEN_ALGO_ORDERS = 200

export interface AlgoOrder {
  algoId: number
  clientAlgoId: string
  symbol: string
  side: 'BUY' | 'SELL'
  type: AlgoOrderType
  timeInForce: 'GTC' | 'IOC' | 'FOK' | 'GTX'
  /** 0 for a close-all (closePosition) order: it closes whatever position there is when it triggers. */
  quantity: number
  /** The child's limit price for STOP / TAKE_PROFIT; 0 otherwise. */
  price: number
  /** 0 for TRAILING_STOP_MARKET. */
  triggerPrice: number
  workingType: WorkingType
  closePosition: boolean
  priceProtect: boolean
  reduceOnly: boolean
  /** Trailing only: the price the running extreme must reach first (the latest price at placement when not sent). */
  activatePrice: number
  /** Whether activatePrice was sent (the views show it only then, and always for trailing orders). */
  activateSent: boolean
  /** Trailing only, in percent (1 = 1 %). */
  callbackRate: number
  status: AlgoStatus
  createTime: number
  updateTime: number
  /** 0 until it triggers. */
  triggerTime: number
  /** The child order's id in the matching engine; 0 until it triggers. */
  actualOrderId: number
  /** Trailing: the highest (SELL) or lowest (BUY) price since placement, up to `trackedUntil`. */
  extreme: number
  trackedUntil: number
  /** The reject message (`rm`) when REJECTED. */
  rejectReason: string
  /** Wall time until which the query endpoints do not know it (the `algo: 'unknown'` fault); 0 normally. */
  hiddenUntil: number
}

export const isOpenAlgo = (order: AlgoOrder): boolean => order.status === 'NEW' || order.status === 'TRIGGERING' || order.status === 'TRIGGERED'

/** The direction the price must move for the order to trigger: 'up' (price ≥ trigger) or 'down' (price ≤ trigger). */
export function triggerDirection(type: AlgoOrderType, side: 'BUY' | 'SELL'): 'up' | 'down' {
  const stop = type === 'STOP' || type === 'STOP_MARKET'
  // A BUY stop fires on a rise, a BUY take-profit on a fall; SELL the other way round (research §1.3).
  return (side === 'BUY') === stop ? 'up' : 'down'
}
