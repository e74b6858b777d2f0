import type { Command } from 'commander'
import { price } from '../format/numbers.js'
import { type ExchangeInfoSymbols, symbolTickDecimals } from '../format/tick-decimals.js'
import type { CliContext } from './context.js'
import { NONE } from './output.js'

/** A price of `symbol` written to its tick ("42,150.10" for a 0.10 tick), or NONE. */
export type PriceOf = (symbol: string, value: string | number | null | undefined) => string

/**
 * The tick sizes a table's prices are written to, read once per command from GET /v1/market/exchange-info
 * (public, weight 10 with or without a symbol): that symbol's rules when the table has one symbol, every
 * symbol's otherwise (`symbols` undefined: not known before the rows arrive). The dashboard reads the same
 * filter (web/src/api/symbol-rules.ts) through the same `tickDecimals`. When the read fails the command still
 * prints, its prices as the API wrote them, and says why on stderr.
 */
export async function pricesOf(context: CliContext, command: Command, symbols?: readonly string[]): Promise<PriceOf> {
  const wanted = symbols === undefined ? undefined : [...new Set(symbols)]
  const decimals = new Map<string, number | undefined>()
  if (wanted?.length !== 0) {
    try {
      const client = context.client(command, 'public')
      const info = (await client.market.exchangeInfo(wanted?.length === 1 ? wanted[0] : undefined)) as ExchangeInfoSymbols
      for (const s of info.symbols) decimals.set(s.symbol, symbolTickDecimals(s))
    } catch (error) {
      context.output.err(`prices as the API wrote them: the tick sizes could not be read (${(error as Error).message})`)
    }
  }
  return (symbol, value) => (value === null || value === undefined || value === '' ? NONE : price(value, decimals.get(symbol)))
}
