import { useEffect, useState } from 'preact/hooks'
import { client } from './session.js'

/**
 * Each symbol's price decimals, from its PRICE_FILTER tick size (GET /v1/market/exchange-info?symbol=,
 * public, weight 10), read once per symbol per page load: prices in tables and on chart axes are
 * written to the tick ("42,150.10", not "42150.1"), so a column of prices lines up.
 */
const known = new Map<string, number>()
const loading = new Map<string, Promise<void>>()

interface ExchangeSymbol {
  symbol: string
  filters: { filterType: string; tickSize?: string }[]
}

/** Decimals of a step like "0.010" (2) or "1" (0). */
export function stepDecimals(step: string): number {
  const [, fraction = ''] = step.split('.')
  return fraction.replace(/0+$/, '').length
}

function load(symbol: string): Promise<void> {
  let pending = loading.get(symbol)
  if (!pending) {
    pending = (client().market.exchangeInfo(symbol) as Promise<{ symbols: ExchangeSymbol[] }>).then(
      (info) => {
        const tick = info.symbols.find((s) => s.symbol === symbol)?.filters.find((f) => f.filterType === 'PRICE_FILTER')?.tickSize
        if (tick) known.set(symbol, stepDecimals(tick))
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
