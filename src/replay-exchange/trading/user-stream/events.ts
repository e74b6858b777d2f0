import type { SymbolInfo } from '../../market-data/recorded/exchange-info.js'
import { type Account, configOf, type Order, type Position, type Trade } from '../accounts/account.js'
import { amountText, money, priceText, qtyText } from '../format.js'
import { unrealizedPnl } from '../positions/margin.js'

/** Execution types of ORDER_TRADE_UPDATE (`x`): CALCULATED is a liquidation's fill. */
export type ExecutionType = 'NEW' | 'TRADE' | 'CANCELED' | 'EXPIRED' | 'CALCULATED'

/** Binance's ORDER_TRADE_UPDATE, field letters and types as the USD-M "Event: Order Update" page. */
export function orderTradeUpdate(
  symbol: SymbolInfo,
  order: Order,
  execution: ExecutionType,
  time: number,
  notional: { bids: number; asks: number },
  trade?: Trade,
): Record<string, unknown> {
  const avg = order.executedQty > 0 ? order.cumQuote / order.executedQty : 0
  return {
    e: 'ORDER_TRADE_UPDATE',
    E: time,
    T: time,
    o: {
      s: order.symbol,
      c: order.clientOrderId,
      S: order.side,
      o: order.type,
      f: order.timeInForce,
      q: qtyText(symbol, order.origQty),
      p: priceText(symbol, order.price),
      ap: priceText(symbol, avg),
      sp: order.stopPrice === undefined ? '0' : priceText(symbol, order.stopPrice),
      x: execution,
      X: order.status,
      i: order.orderId,
      l: qtyText(symbol, trade?.qty ?? 0),
      z: qtyText(symbol, order.executedQty),
      L: priceText(symbol, trade?.price ?? 0),
      // "will not push if no commission": N and n only on fills that paid one (an ADL fill pays none).
      ...(trade && trade.commission !== 0 ? { N: 'USDT', n: money(trade.commission) } : {}),
      T: trade?.time ?? order.updateTime,
      t: trade?.id ?? 0,
      b: money(notional.bids),
      a: money(notional.asks),
      m: trade?.maker ?? false,
      R: order.reduceOnly,
      wt: order.workingType ?? 'CONTRACT_PRICE',
      ot: order.origType ?? order.type,
      ps: 'BOTH',
      cp: order.closePosition ?? false,
      rp: money(trade?.realizedPnl ?? 0),
      pP: order.priceProtect ?? false,
      si: 0,
      ss: 0,
      V: 'EXPIRE_MAKER',
      pm: 'NONE',
      gtd: 0,
      er: String(order.expireReason),
    },
  }
}

export type AccountUpdateReason = 'ORDER' | 'FUNDING_FEE' | 'DEPOSIT' | 'MARGIN_TYPE_CHANGE'

/**
 * Binance's ACCOUNT_UPDATE: the USDT balance (`bc` the change other than PnL and commission) and
 * the changed position, if any (a cross FUNDING_FEE update carries no position).
 */
export function accountUpdate(
  account: Account,
  reason: AccountUpdateReason,
  time: number,
  balanceChange: number,
  position?: { symbol: SymbolInfo; value: Position; mark: number },
): Record<string, unknown> {
  const wallet = account.balances.get('USDT') ?? 0
  let isolated = 0
  for (const [name, p] of account.positions) if (configOf(account, name).marginType === 'isolated') isolated += p.isolatedWallet
  const P = position
    ? [
        {
          s: position.symbol.symbol,
          pa: amountText(position.symbol, position.value.amount),
          ep: priceText(position.symbol, position.value.entryPrice),
          bep: priceText(position.symbol, position.value.entryPrice),
          cr: money(position.value.accumulatedRealized),
          up: money(unrealizedPnl(position.value.amount, position.value.entryPrice, position.mark)),
          mt: configOf(account, position.symbol.symbol).marginType,
          iw: money(position.value.isolatedWallet),
          ps: 'BOTH',
        },
      ]
    : []
  return { e: 'ACCOUNT_UPDATE', E: time, T: time, a: { m: reason, B: [{ a: 'USDT', wb: money(wallet), cw: money(wallet - isolated), bc: money(balanceChange) }], P } }
}
