import type { SymbolInfo } from '../../market-data/recorded/exchange-info.js'
import type { Order } from '../accounts/account.js'
import { priceText, qtyText } from '../format.js'
import type { AlgoOrder } from './algo-order.js'

/**
 * Close-all orders show `GTE_GTC`: the -4130 message pairs "GTE and closePosition", and the one
 * recorded user-stream capture of such an order (research §1.4) carries `f:"GTE_GTC"`.
 */
function timeInForceOf(order: AlgoOrder): string {
  return order.closePosition ? 'GTE_GTC' : order.timeInForce
}

/**
 * The algo order of POST/DELETE /fapi/v1/algoOrder and openAlgoOrders, with the field names of the
 * New Algo Order response (`binance` package FuturesAlgoOrderResponse); `activatePrice` and
 * `callbackRate` only on trailing orders, as plain orders showed them before the migration.
 */
export function algoOrderView(info: SymbolInfo, order: AlgoOrder): Record<string, unknown> {
  return {
    algoId: order.algoId,
    clientAlgoId: order.clientAlgoId,
    algoType: 'CONDITIONAL',
    orderType: order.type,
    symbol: order.symbol,
    side: order.side,
    positionSide: 'BOTH',
    timeInForce: timeInForceOf(order),
    quantity: qtyText(info, order.quantity),
    algoStatus: order.status,
    triggerPrice: priceText(info, order.triggerPrice),
    price: priceText(info, order.price),
    icebergQuantity: null,
    selfTradePreventionMode: 'EXPIRE_MAKER',
    workingType: order.workingType,
    priceMatch: 'NONE',
    closePosition: order.closePosition,
    priceProtect: order.priceProtect,
    reduceOnly: order.reduceOnly,
    ...(order.type === 'TRAILING_STOP_MARKET' ? { activatePrice: priceText(info, order.activatePrice), callbackRate: String(order.callbackRate) } : {}),
    createTime: order.createTime,
    updateTime: order.updateTime,
    triggerTime: order.triggerTime,
    goodTillDate: 0,
  }
}

/** GET /fapi/v1/algoOrder and allAlgoOrders: the order plus its child in the matching engine (`actual…`; empty before it triggers). */
export function algoQueryView(info: SymbolInfo, order: AlgoOrder, child: Order | undefined): Record<string, unknown> {
  const avg = child && child.executedQty > 0 ? child.cumQuote / child.executedQty : 0
  return {
    ...algoOrderView(info, order),
    actualOrderId: child ? String(child.orderId) : '',
    actualPrice: priceText(info, avg),
    actualType: child ? child.type : '',
    actualQty: qtyText(info, child?.executedQty ?? 0),
  }
}

/**
 * Binance's ALGO_UPDATE (USD-M "Event: Algo Order Update"): `ai` the child's order id ("" before it
 * triggers), `ap`/`aq` its average price and executed quantity, `act` its type, `tt` trigger time,
 * `rm` the reject message. `placedOnly` shows the child as just placed (TRIGGERED: "ap":"0","aq":"0",
 * as in the recorded payload of nautilus#3287) even when it has filled since.
 */
export function algoUpdate(info: SymbolInfo, order: AlgoOrder, time: number, child: Order | undefined, placedOnly = false): Record<string, unknown> {
  const executed = child && !placedOnly ? child.executedQty : 0
  const avg = child && executed > 0 ? child.cumQuote / child.executedQty : 0
  return {
    e: 'ALGO_UPDATE',
    T: time,
    E: time,
    o: {
      caid: order.clientAlgoId,
      aid: order.algoId,
      at: 'CONDITIONAL',
      o: order.type,
      s: order.symbol,
      S: order.side,
      ps: 'BOTH',
      f: timeInForceOf(order),
      q: qtyText(info, order.quantity),
      X: order.status,
      ai: child ? String(child.orderId) : '',
      ap: priceText(info, avg),
      aq: qtyText(info, executed),
      act: child ? child.type : '',
      tp: priceText(info, order.triggerPrice),
      p: priceText(info, order.price),
      V: 'EXPIRE_MAKER',
      wt: order.workingType,
      pm: 'NONE',
      cp: order.closePosition,
      pP: order.priceProtect,
      R: order.reduceOnly,
      tt: order.triggerTime,
      gtd: 0,
      rm: order.rejectReason,
    },
  }
}
