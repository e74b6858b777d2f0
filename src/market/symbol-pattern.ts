import { quoted } from '../http/schema-issues.js'

/** A USD-M symbol as Perpetua's jobs, strategies and history commands take it: 2–30 uppercase letters and digits (BTCUSDT). */
export const SYMBOL_PATTERN = '^[A-Z0-9]{2,30}$'
export const SYMBOL = new RegExp(SYMBOL_PATTERN)

/**
 * Why `value` is not a symbol, in words. Lower case is refused, not upper-cased: the spec says "Uppercase
 * symbols", and a job's config echoes what was sent (docs/decisions/backtests.md).
 */
export function symbolProblem(value: unknown): string {
  const got = quoted(value)
  if (typeof value === 'string' && SYMBOL.test(value.toUpperCase())) return `symbols are upper case, e.g. BTCUSDT; got ${got}, send "${value.toUpperCase()}"`
  return `a symbol is 2 to 30 upper-case letters and digits, e.g. BTCUSDT${got === undefined ? '' : `; got ${got}`}`
}
