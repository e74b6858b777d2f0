import { useEffect, useState } from 'preact/hooks'
import { type ExchangeInfoSymbols, tickDecimals } from '../../../src/format/tick-decimals.js'
import { client } from './session.js'

/**
 * Each symbol's price decimals, from its PRICE_FILTER tick size (GET /v1/market/exchange-info?symbol=,
 * public, weight 10), read once per symbol per page load: prices in tables and on chart axes are
 * written to the tick ("42,150.10", not "42150.1"), so a column of prices lines up.
 */
const known = new Map<string, number>()
/** Each symbol's base asset ("BTC"), the unit of its quantities, from the same answer. */
const bases = new Map<string, string>()
const loading = new Map<string, Promise<void>>()

function load(symbol: string): Promise<void> {
  let pending = loading.get(symbol)
  if (!pending) {
    pending = (client().market.exchangeInfo(symbol) as Promise<ExchangeInfoSymbols>).then(
      (info) => {
        const decimals = tickDecimals(info, symbol)
        if (decimals !== undefined) known.set(symbol, decimals)
        const base = info.symbols.find((s) => s.symbol === symbol)?.baseAsset
        if (base) bases.set(symbol, base)
      },
      // Without exchange info, prices show as the API wrote them.
      () => undefined,
    )
    loading.set(symbol, pending)
  }
  return pending
}

/** The price decimals of each of `symbols` (undefined until known); re-renders as they arrive. */
export function usePriceDecimals(symbols: string[]): (symbol: string) => number | undefined {
  const [, setVersion] = useState(0)
  const wanted = symbols.filter((s) => !known.has(s))
  const key = [...new Set(wanted)].sort().join(',')
  useEffect(() => {
    if (!key) return
    let live = true
    void Promise.all(key.split(',').map(load)).then(() => live && setVersion((v) => v + 1))
    return () => {
      live = false
    }
  }, [key])
  return (symbol) => known.get(symbol)
}

/** The base asset of each of `symbols` (undefined until known), the unit a quantity of it is counted in. */
export function useBaseAssets(symbols: string[]): (symbol: string) => string | undefined {
  usePriceDecimals(symbols)
  return (symbol) => bases.get(symbol)
}
