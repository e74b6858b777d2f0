import type { ExitLevels } from '../../engine/exit-levels.js'
import { type DecimalRules, price, quantity } from '../../http/decimals.js'
import type { ProtectiveOrdersTable } from '../../db/schema.js'
import type { ProtectiveKind } from './client-algo-ids.js'

/** One protective order that must rest on the exchange for a position (the fields a placement sends, as decimal strings). */
export interface DesiredOrder {
  kind: ProtectiveKind
  type: Exclude<ProtectiveOrdersTable['type'], 'MARKET'>
  side: 'BUY' | 'SELL'
  triggerPrice: string | null
  quantity: string | null
  closePosition: boolean
  workingType: 'MARK_PRICE' | 'CONTRACT_PRICE'
  activatePrice: string | null
  /** Binance's percent (1 = 1 %). */
  callbackRate: string | null
}

/** Binance's callbackRate bounds in percent (research/protective-orders.md §1.2: 0.1 to 20 since 2026-10-23), in steps of 0.1. */
const CALLBACK_MIN = 0.1
const CALLBACK_MAX = 20

/**
 * The orders that must rest for symbol s's position `qty` (signed) under the ledger's levels (ExitLevels:
 * the run's exits at the position's average entry, a module's stated levels in their place): pure.
 *
 * - stop loss: STOP_MARKET closePosition at the level in force (the module's, else the exits');
 * - take profit: TAKE_PROFIT_MARKET closePosition likewise;
 * - trailing stop: TRAILING_STOP_MARKET reduce-only for |qty| (closePosition cannot express it), callbackRate
 *   the exits' fraction in percent floored to Binance's 0.1 step (a tighter callback fires no later than the
 *   engine's), activatePrice the engine's activation price until trailing has started (absent: the exchange
 *   trails from the price at placement, as the engine trails from the entry).
 * Prices are the engine's levels, already on the tick grid toward the position's side (ExitLevels.below/above:
 * a long's stop at or below its fraction, a take profit at or beyond it), sent as they are.
 * workingType: MARK_PRICE for trigger mark, CONTRACT_PRICE (last) otherwise. Flat, or no levels: nothing.
 */
export function desiredOrders(qty: number, levels: ExitLevels | undefined, s: number, rules: DecimalRules): DesiredOrder[] {
  if (qty === 0 || levels === undefined) return []
  const side = qty > 0 ? 'SELL' : 'BUY'
  const workingType = levels.rules?.trigger === 'mark' ? 'MARK_PRICE' : 'CONTRACT_PRICE'
  const base = { side, workingType, quantity: null, activatePrice: null, callbackRate: null } as const
  const orders: DesiredOrder[] = []
  const stop = levels.stopLevel(s)
  if (stop > 0) orders.push({ ...base, kind: 'stop_loss', type: 'STOP_MARKET', triggerPrice: price(stop, rules), closePosition: true })
  const take = levels.takeLevel(s)
  if (take > 0) orders.push({ ...base, kind: 'take_profit', type: 'TAKE_PROFIT_MARKET', triggerPrice: price(take, rules), closePosition: true })
  const callback = levels.rules?.trailingStop
  if (callback !== undefined) {
    const percent = Math.min(CALLBACK_MAX, Math.max(CALLBACK_MIN, Math.floor(callback * 1000 + 1e-9) / 10))
    const activation = levels.exitBest[s] !== levels.exitBest[s] ? levels.exitActivation[s]! : Number.NaN
    orders.push({
      ...base,
      kind: 'trailing_stop',
      type: 'TRAILING_STOP_MARKET',
      triggerPrice: null,
      quantity: quantity(Math.abs(qty), rules),
      closePosition: false,
      activatePrice: activation > 0 ? price(activation, rules) : null,
      callbackRate: percent.toFixed(1),
    })
  }
  return orders
}

/** Whether a row (or a desired order) asks the exchange for the same order as `want`. */
export function sameOrder(row: { type: string; side: string; trigger_price: string | null; quantity: string | null; close_position: boolean; working_type: string; activate_price: string | null; callback_rate: string | null }, want: DesiredOrder): boolean {
  const eq = (a: string | null, b: string | null) => (a === null || b === null ? a === b : Number(a) === Number(b))
  return (
    row.type === want.type &&
    row.side === want.side &&
    row.close_position === want.closePosition &&
    row.working_type === want.workingType &&
    eq(row.trigger_price, want.triggerPrice) &&
    eq(row.quantity, want.quantity) &&
    eq(row.activate_price, want.activatePrice) &&
    eq(row.callback_rate, want.callbackRate)
  )
}
