import { type AppError, invalidParameter } from '../http/errors.js'

/** 400 INVALID_PARAMETER on `field` for a symbol the exchange does not list, suggesting the closest one it does. */
export function unlistedSymbol(field: string, symbol: string, listed: Iterable<string>): AppError {
  const closest = closestSymbol(symbol, listed)
  return invalidParameter(field, `the exchange lists no symbol ${symbol}${closest === undefined ? '' : `; did you mean ${closest}?`}`)
}

/**
 * The listed symbol nearest to `symbol` by edit distance (insert, delete, substitute, swap two neighbours:
 * BTCUSTD is one swap from BTCUSDT), or undefined when none is within 3 edits: beyond that a
 * suggestion is a guess (XYZ would be offered XRPUSDT). Ties go to the exchange's order.
 */
export function closestSymbol(symbol: string, listed: Iterable<string>): string | undefined {
  let best: { name: string; distance: number } | undefined
  for (const name of listed) {
    const distance = editDistance(symbol, name)
    if (distance <= MAX_SUGGESTION_EDITS && (best === undefined || distance < best.distance)) best = { name, distance }
  }
  return best?.name
}

const MAX_SUGGESTION_EDITS = 3

/** Optimal-string-alignment distance: Levenshtein plus a swap of adjacent characters as one edit. */
export function editDistance(a: string, b: string): number {
  // Rows i-2, i-1 and i of the (a.length + 1) × (b.length + 1) table.
  let before = new Array<number>(b.length + 1).fill(0)
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) value = Math.min(value, before[j - 2]! + 1)
      current.push(value)
    }
    before = previous
    previous = current
  }
  return previous[b.length]!
}
