import type { SymbolRules } from '../engine/types.js'
import { invalidParameter } from '../http/errors.js'
import { maxLeverageAt } from '../market/leverage-brackets.js'

/**
 * The one place deploy asks how much leverage a symbol allows: the tier (leverage bracket) of the notional
 * the run can reach, capital × leverage, caps it (Binance: 125x up to 50,000 USDT of BTCUSDT … 20x up to
 * 20,000,000). The tiers are the symbol's rules' (the dated snapshot's per symbol, BTCUSDT's sample as the
 * fallback: src/market/leverage-brackets.ts). 400 INVALID_PARAMETER (leverage) when the run's full notional
 * falls in a tier allowing less leverage.
 */
export function assertLeverageWithinTiers(symbol: string, rules: SymbolRules, capital: number, leverage: number): void {
  const notional = capital * leverage
  const allowed = maxLeverageAt(rules.brackets, notional)
  if (leverage > allowed) {
    throw invalidParameter('leverage', `leverage ${leverage} exceeds ${symbol}'s maximum of ${allowed}x at a notional of ${notional} USDT (capital × leverage); lower the leverage or the capital`)
  }
}
