import { decimal } from '../market-data/format.js'
import type { SymbolInfo } from '../market-data/recorded/exchange-info.js'

/** How the trading wing prints numbers, as Binance does: money with 8 decimals, prices and quantities on the symbol's precision. */
export function money(value: number): string {
  const text = value.toFixed(8)
  return text === '-0.00000000' ? '0.00000000' : text
}

export function priceText(symbol: SymbolInfo, value: number): string {
  return decimal(value, symbol.pricePrecision)
}

export function qtyText(symbol: SymbolInfo, value: number): string {
  return decimal(value, symbol.quantityPrecision)
}

/** A signed quantity such as positionAmt ("-0.010"). */
export function amountText(symbol: SymbolInfo, value: number): string {
  return value < 0 ? `-${qtyText(symbol, -value)}` : qtyText(symbol, value)
}
