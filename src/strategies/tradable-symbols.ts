import { invalidParameter } from '../http/errors.js'
import { unlistedSymbol } from '../market/closest-symbol.js'
import { symbolDirectory, type SymbolDirectory } from '../market/exchange-info.js'
import { isUpstreamUnavailable } from '../market/upstream-client.js'
import type { MarketData } from '../market/market-data.js'

/**
 * Refuses (400 INVALID_PARAMETER, field symbols) a symbol the exchange does not list, naming the closest
 * listed one, and unless `needs` is 'listed' one it lists as not trading.
 * `whenUnreachable`: 'defer' lets a draft (or a backtest) be written while the exchange (and every cached copy
 * of its listing) is out of reach, a later step checking again; 'refuse' (deploy) answers the exchange's 502.
 * `needs`: 'trading' (a strategy trades it) or 'listed' (a backtest reads its history, which a halted
 * or settling contract still has).
 */
export type SymbolCheck = (symbols: readonly string[], whenUnreachable: 'defer' | 'refuse', needs?: 'trading' | 'listed') => Promise<void>

/**
 * The exchange's listing as the gateway caches it (exchange info: fresh for a minute, served stale for an
 * hour while the exchange is unreachable): a strategy on BTCUSD is refused at create, PATCH and deploy,
 * and a backtest or sweep at submission, instead of a run that can never start.
 */
export function tradableSymbols(market: MarketData): SymbolCheck {
  return async (symbols, whenUnreachable, needs = 'trading') => {
    let directory: SymbolDirectory
    try {
      directory = await symbolDirectory(market.session())
    } catch (error) {
      if (whenUnreachable === 'defer' && isUpstreamUnavailable(error)) return
      throw error
    }
    for (const symbol of symbols) {
      const listed = directory.symbols.get(symbol)
      if (!listed) throw unlistedSymbol('symbols', symbol, directory.symbols.keys())
      if (needs === 'trading' && listed.status !== 'trading') throw invalidParameter('symbols', `${symbol} is not trading on the exchange (status ${listed.status})`)
    }
  }
}
