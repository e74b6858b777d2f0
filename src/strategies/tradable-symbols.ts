import { invalidParameter } from '../http/errors.js'
import { symbolDirectory, type SymbolDirectory } from '../market/exchange-info.js'
import { isUpstreamUnavailable } from '../market/upstream-client.js'
import type { MarketData } from '../market/market-data.js'

/**
 * Refuses (400 INVALID_PARAMETER, field symbols) a symbol the exchange does not list or lists as not trading.
 * `whenUnreachable`: 'defer' lets a draft be written while the exchange (and every cached copy of its listing)
 * is out of reach, the deploy checking again; 'refuse' (deploy) answers the exchange's 502.
 */
export type SymbolCheck = (symbols: readonly string[], whenUnreachable: 'defer' | 'refuse') => Promise<void>

/**
 * The exchange's listing as the gateway caches it (exchange info: fresh for a minute, served stale for an
 * hour while the exchange is unreachable): a strategy on BTCUSD is refused at create, PATCH and deploy
 * instead of a run that can never start.
 */
export function tradableSymbols(market: MarketData): SymbolCheck {
  return async (symbols, whenUnreachable) => {
    let directory: SymbolDirectory
    try {
      directory = await symbolDirectory(market.session())
    } catch (error) {
      if (whenUnreachable === 'defer' && isUpstreamUnavailable(error)) return
      throw error
    }
    for (const symbol of symbols) {
      const listed = directory.symbols.get(symbol)
      if (!listed) throw invalidParameter('symbols', `the exchange lists no symbol ${symbol}`)
      if (listed.status !== 'trading') throw invalidParameter('symbols', `${symbol} is not trading on the exchange (status ${listed.status})`)
    }
  }
}
