import { feeRates } from '../../engine/fees.js'
import type { SymbolRules } from '../../engine/types.js'
import type { SingleSymbolTemplate } from '../../templates/types.js'
import { accepted } from '../../http/errors.js'
import { resolveParams } from '../../templates/validate.js'
import type { RunRow } from '../queries.js'
import { intervalMs } from '../timeframes.js'
import type { PaperSetup } from './paper-broker.js'

/** Every paper (dry-run) fill pays the taker rate of Binance VIP 0, as match_exchange backtests do: strategies carry no fee model. */
export const PAPER_FEES = feeRates('match_exchange')

/** The paper broker's setup for a one-symbol run: its params re-validated, its capital and leverage as stored. */
export function paperSetup(run: RunRow, template: SingleSymbolTemplate, rules: SymbolRules): PaperSetup {
  return {
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
