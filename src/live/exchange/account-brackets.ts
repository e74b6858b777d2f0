import type { SymbolRules } from '../../engine/types.js'
import { parseLeverageBrackets } from '../../binance-formats/leverage-brackets.js'
import type { BinanceTradingClient } from '../../trading/binance/trading-client.js'
import { KEY_REFUSED, RunFailure } from './run-failure.js'

/**
 * A live run's rules with its account's own margin tiers (GET /fapi/v1/leverageBracket): Binance
 * adjusts tiers per account and over time, and the exchange liquidates by the account's, so the run's
 * ledger computes its liquidation price from the same table. A symbol the answer lacks keeps the rules'
 * (snapshot) tiers; a read that fails throws, so the runner's start is tried again.
 */
export async function withAccountBrackets(rules: SymbolRules, client: BinanceTradingClient, symbol: string): Promise<SymbolRules> {
  const answer = await client.leverageBrackets(symbol)
  if (answer.kind === 'rejected' && KEY_REFUSED.has(answer.code)) {
    throw new RunFailure('KEY_REVOKED', `the exchange refused the key (${answer.code} ${answer.msg}); register a working key and deploy again`)
  }
  if (answer.kind !== 'ok') throw new Error(`could not read the account's leverage brackets of ${symbol}: ${answer.kind === 'rejected' ? `${answer.code} ${answer.msg}` : answer.reason}`)
  const brackets = parseLeverageBrackets(answer.value, 'GET /fapi/v1/leverageBracket').get(symbol)
  return brackets ? { ...rules, brackets } : rules
}
