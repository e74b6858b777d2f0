import type { MaintenanceBracket } from './types.js'

/**
 * Binance's BTCUSDT leverage & margin tiers as GET /fapi/v1/leverageBracket returned them (tiers 1–10,
 * 0.4 % up to 50,000 USDT of notional … 50 % up to 500,000,000). A sample response recorded in
 * boolean404/heikin-ashi-trading-bot `json/fapiPrivate_get_leverage_bracket.py`; every cum checks out as
 * cum(n) = cum(n−1) + floor(n) × (rate(n) − rate(n−1)). Binance changes tiers from time to time and
 * per symbol: callers pass the symbol's own table when they have it; this one is the fallback.
 */
export const BINANCE_BTCUSDT_BRACKETS: readonly MaintenanceBracket[] = [
  { notionalFloor: 0, notionalCap: 50_000, maintMarginRatio: 0.004, cum: 0, initialLeverage: 125 },
  { notionalFloor: 50_000, notionalCap: 250_000, maintMarginRatio: 0.005, cum: 50, initialLeverage: 100 },
  { notionalFloor: 250_000, notionalCap: 3_000_000, maintMarginRatio: 0.01, cum: 1_300, initialLeverage: 50 },
  { notionalFloor: 3_000_000, notionalCap: 20_000_000, maintMarginRatio: 0.025, cum: 46_300, initialLeverage: 20 },
  { notionalFloor: 20_000_000, notionalCap: 40_000_000, maintMarginRatio: 0.05, cum: 546_300, initialLeverage: 10 },
  { notionalFloor: 40_000_000, notionalCap: 100_000_000, maintMarginRatio: 0.1, cum: 2_546_300, initialLeverage: 5 },
  { notionalFloor: 100_000_000, notionalCap: 120_000_000, maintMarginRatio: 0.125, cum: 5_046_300, initialLeverage: 4 },
  { notionalFloor: 120_000_000, notionalCap: 200_000_000, maintMarginRatio: 0.15, cum: 8_046_300, initialLeverage: 3 },
  { notionalFloor: 200_000_000, notionalCap: 300_000_000, maintMarginRatio: 0.25, cum: 28_046_300, initialLeverage: 2 },
  { notionalFloor: 300_000_000, notionalCap: 500_000_000, maintMarginRatio: 0.5, cum: 103_046_300, initialLeverage: 1 },
]

/** The tier a position of this notional falls in (floor < notional ≤ cap); beyond the last cap, the last tier. */
export function bracketFor(brackets: readonly MaintenanceBracket[], notional: number): MaintenanceBracket {
  for (const bracket of brackets) if (notional <= bracket.notionalCap) return bracket
  const last = brackets[brackets.length - 1]
  if (!last) throw new RangeError('a symbol needs at least one maintenance bracket')
  return last
}

/** Maintenance margin of a position of this notional: notional × rate − cum of its tier. */
export function maintenanceMargin(brackets: readonly MaintenanceBracket[], notional: number): number {
  const bracket = bracketFor(brackets, notional)
  return notional * bracket.maintMarginRatio - bracket.cum
}

/**
 * The price at which an isolated position's margin balance (isolated wallet + unrealized PnL) equals its
 * maintenance margin: Binance's USDⓈ-M formula with TMM = UPNL = 0 (isolated), one-way mode,
 *   LP = (WB + cum − side × Q × EP) / (Q × MMR − side × Q),
 * taking MMR and cum from the tier of the notional at LP itself, as Binance prescribes when the tiers at
 * the entry and at the liquidation price differ. 0 means unreachable (a long whose margin covers the
 * whole notional).
 */
export function liquidationPrice(
  side: 1 | -1,
  qty: number,
  entryPrice: number,
  isolatedMargin: number,
  brackets: readonly MaintenanceBracket[],
): number {
  if (brackets.length === 0) throw new RangeError('a symbol needs at least one maintenance bracket')
  for (const bracket of brackets) {
    const price = priceInTier(bracket, side, qty, entryPrice, isolatedMargin)
    const notional = qty * price
    // The margin requirement is continuous in the notional, so exactly one tier agrees with its own price.
    if (notional >= bracket.notionalFloor * (1 - 1e-12) && notional <= bracket.notionalCap * (1 + 1e-12)) {
      return Math.max(price, 0)
    }
  }
  // Negative (unreachable) or above the last cap: the last tier's formula decides.
  return Math.max(priceInTier(brackets[brackets.length - 1]!, side, qty, entryPrice, isolatedMargin), 0)
}

// A function of its own, not a closure per call: under tsx (the benches) esbuild names every closure with a
// helper call, 1 % of bench/backtest.ts's time at one liquidation price per fill.
function priceInTier(bracket: MaintenanceBracket, side: 1 | -1, qty: number, entryPrice: number, isolatedMargin: number): number {
  return (isolatedMargin + bracket.cum - side * qty * entryPrice) / (qty * bracket.maintMarginRatio - side * qty)
}
