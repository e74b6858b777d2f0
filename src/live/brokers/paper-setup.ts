import { feeRates } from '../../engine/fees.js'
import type { Ledger } from '../../engine/ledger.js'
import type { SymbolRules } from '../../engine/types.js'
import type { SingleSymbolTemplate } from '../../templates/types.js'
import { accepted } from '../../http/errors.js'
import { resolveParams } from '../../templates/validate.js'
import { exitRulesOf } from '../../strategies/exits.js'
import type { RunRow } from '../queries.js'
import { intervalMs } from '../timeframes.js'
import type { PaperSetup } from './paper-broker.js'

/** Every paper (dry-run) fill pays the taker rate of Binance VIP 0, as match_exchange backtests do: strategies carry no fee model. */
export const PAPER_FEES = feeRates('match_exchange')

/**
 * Protective exits of a run's paper ledger: its exits, and any levels its signal states. A dry run's ledger
 * simulates them; a live run's keeps them `placed` (the levels and the latch, never an exit of its own: they
 * rest on the exchange, src/live/protection/).
 */
export function paperProtection(run: Pick<RunRow, 'dry_run' | 'exits'>): PaperSetup['protect'] {
  return { rules: run.exits ? exitRulesOf(run.exits) : undefined, placed: !run.dry_run }
}

/** The paper broker's setup for a one-symbol run: its params re-validated, its capital, leverage and exits as stored. */
export function paperSetup(run: RunRow, template: SingleSymbolTemplate, rules: SymbolRules): PaperSetup {
  return {
    protect: paperProtection(run),
    template,
    params: accepted(resolveParams(template, run.params)),
    symbol: run.symbol,
    intervalMs: intervalMs(run.timeframe),
    rules,
    capital: Number(run.capital),
    leverage: run.leverage,
    fees: PAPER_FEES,
  }
}

/**
 * A resumed run's carried positions under its exits (the ledger restored with the new run's protection):
 * with the exits unchanged they keep their levels, best prices and latches exactly; changed while paused,
 * each open position's levels are derived afresh from its entry price (ExitLevels.renew).
 */
export function carryProtection(ledger: Ledger, previous: Pick<RunRow, 'exits'>, next: Pick<RunRow, 'exits'>): void {
  if (JSON.stringify(previous.exits) === JSON.stringify(next.exits)) return
  const levels = ledger.exits
  if (!levels) return
  ledger.qty.forEach((q, s) => {
    if (q !== 0) levels.renew(s, Math.sign(q), ledger.entryPrice[s]!)
  })
}
