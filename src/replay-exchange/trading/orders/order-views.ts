import type { SymbolInfo } from '../../market-data/recorded/exchange-info.js'
import type { Income, Order, Trade } from '../accounts/account.js'
import { money, priceText, qtyText } from '../format.js'

/** The order object of POST/GET/DELETE /fapi/v1/order, openOrders and allOrders (GET adds `time`). */
export function orderView(info: SymbolInfo, order: Order, withTime: boolean): Record<string, unknown> {
  const avg = order.executedQty > 0 ? order.cumQuote / order.executedQty : 0
  return {
    orderId: order.orderId,
    symbol: order.symbol,
    status: order.status,
    clientOrderId: order.clientOrderId,
    price: priceText(info, order.price),
    avgPrice: priceText(info, avg),
    origQty: qtyText(info, order.origQty),
    executedQty: qtyText(info, order.executedQty),
    cumQty: qtyText(info, order.executedQty),
    cumQuote: money(order.cumQuote),
    timeInForce: order.timeInForce,
    type: order.type,
    reduceOnly: order.reduceOnly,
    closePosition: order.closePosition ?? false,
    side: order.side,
    positionSide: 'BOTH',
    stopPrice: order.stopPrice === undefined ? '0' : priceText(info, order.stopPrice),
    workingType: order.workingType ?? 'CONTRACT_PRICE',
    priceProtect: order.priceProtect ?? false,
    origType: order.origType ?? order.type,
    priceMatch: 'NONE',
    selfTradePreventionMode: 'EXPIRE_MAKER',
    goodTillDate: 0,
    ...(withTime ? { time: order.time } : {}),
    updateTime: order.updateTime,
  }
}

/** A GET /fapi/v1/userTrades row; commission positive as charged, in USDT. */
export function tradeView(info: SymbolInfo, trade: Trade): Record<string, unknown> {
  return {
    buyer: trade.side === 'BUY',
    commission: money(trade.commission),
    commissionAsset: 'USDT',
    id: trade.id,
    maker: trade.maker,
    orderId: trade.orderId,
    price: priceText(info, trade.price),
    qty: qtyText(info, trade.qty),
    quoteQty: money(trade.quoteQty),
    realizedPnl: money(trade.realizedPnl),
    side: trade.side,
    positionSide: 'BOTH',
    symbol: trade.symbol,
    time: trade.time,
  }
}

/** A GET /fapi/v1/income row. */
export function incomeView(income: Income): Record<string, unknown> {
  return {
    symbol: income.symbol,
    incomeType: income.incomeType,
    income: money(income.income),
    asset: income.asset,
    info: income.info,
    time: income.time,
    tranId: income.tranId,
    tradeId: income.tradeId,
  }
}
