/**
 * How numbers read in both clients, the dashboard (web/src imports this file) and the `perpetua` CLI: prices
 * to their symbol's tick, large volumes in words, money with its unit. Pure: no I/O, nothing of the DOM or
 * of Node, so esbuild bundles it for the browser and tsx runs it for the CLI. Decimal strings stay exact in
 * `--json` and in the API; these only round for reading.
 */

/** A number with thousands separators and exactly `digits` decimals; null, undefined and '' are '—'. */
export function num(value: string | number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || value === '') return '—'
  const n = typeof value === 'number' ? value : Number(value)
  if (!Number.isFinite(n)) return String(value)
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
}

/**
 * A large amount in words: 165,912,345 → `165.9M`, 1,234 → `1.2K`. One decimal: four significant figures
 * at most, enough to rank volumes in a column (two decimals, as before, read `165.91M`: noise at a glance).
 */
export function compact(value: string | number): string {
  const n = Number(value)
  if (!Number.isFinite(n)) return String(value)
  return n.toLocaleString('en-US', { notation: 'compact', maximumFractionDigits: 1 })
}

/** The settlement currency of every USDⓈ-M amount the API gives (equity, PnL, fees, funding). */
export const QUOTE = 'USDT'

/** An amount of money with its unit: `1,234.50 USDT`. */
export function money(value: string | number | null | undefined, digits = 2): string {
  const shown = num(value, digits)
  return shown === '—' ? shown : `${shown} ${QUOTE}`
}

/** A price to its symbol's tick decimals (`decimals`), as the API wrote it while those are unknown. */
export function price(value: string | number | null | undefined, decimals: number | undefined): string {
  if (decimals === undefined) return value === null || value === undefined || value === '' ? '—' : String(value)
  return num(value, decimals)
}
