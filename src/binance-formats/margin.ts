import type { MaintenanceBracket } from './leverage-brackets.js'

// Binance's USDⓈ-M margin arithmetic over a symbol's tiers: what the exchange computes, so the engine's
// ledger and the replay exchange's venue liquidate at the same price.

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
