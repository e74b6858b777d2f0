/**
 * A number as a decimal string of at most `decimals` places, trailing zeros dropped: 106519.20000000001 at 2
 * places is "106519.2". Minimal on purpose: the project's exact-decimal module (issue 21, another part) replaces it.
 */
export function decimalText(x: number, decimals: number): string {
  const fixed = x.toFixed(decimals)
  const trimmed = fixed.includes('.') ? fixed.replace(/0+$/, '').replace(/\.$/, '') : fixed
  return trimmed === '-0' ? '0' : trimmed
}

/** Money (PnL, fees, funding, equity): at most 8 decimals. */
export const MONEY_DECIMALS = 8
