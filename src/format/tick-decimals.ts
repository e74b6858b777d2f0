import { stepDecimals } from '../engine/steps.js'

/** A symbol's record in GET /v1/market/exchange-info, the part a price's decimals come from. */
export interface SymbolFilters {
  symbol: string
  /** The unit of the symbol's quantities ("BTC"). */
  baseAsset?: string
  filters: { filterType: string; tickSize?: string }[]
}

/** The part of GET /v1/market/exchange-info a price's decimals come from. */
export interface ExchangeInfoSymbols {
  symbols: SymbolFilters[]
}

/**
 * A symbol's price decimals from its PRICE_FILTER tick size ("0.10" → 1, "1" → 0), or undefined when the
 * record does not carry one (prices then print as the API wrote them).
 */
export function symbolTickDecimals(record: SymbolFilters): number | undefined {
  const tick = Number(record.filters.find((f) => f.filterType === 'PRICE_FILTER')?.tickSize)
  return tick > 0 ? stepDecimals(tick) : undefined
}

/** The price decimals of `symbol` in an exchange-info answer, or undefined. */
export function tickDecimals(info: ExchangeInfoSymbols, symbol: string): number | undefined {
  const record = info.symbols.find((s) => s.symbol === symbol)
  return record && symbolTickDecimals(record)
}
