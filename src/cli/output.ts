import Table from 'cli-table3'
import { compact, money as moneyText, num, QUOTE } from '../format/numbers.js'

/** Where a command writes: results to stdout, everything about the run (progress, notes) to stderr. */
export interface Output {
  out(text: string): void
  err(text: string): void
  /** Whether stderr is a terminal (a live progress bar) or a pipe or file (one line per update). */
  readonly errIsTTY: boolean
}

export const processOutput: Output = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  errIsTTY: process.stderr.isTTY === true,
}

/** `--json`: the API's answer exactly as it came, one line (jq reads it; pretty-print with jq .). */
export function printJson(output: Output, value: unknown): void {
  output.out(JSON.stringify(value))
}

// Plain characters only (no colours, so piped output stays clean) and no rule between rows.
const STYLE = { head: [], border: [] }
const CHARS = { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' }

/** A table with a header row; `widths` caps some columns (by index), wrapping their text at words. */
export function table(head: string[], rows: (string | number)[][], widths: Record<number, number> = {}): string {
  const wrapped = Object.keys(widths).length > 0
  const t = new Table({
    head,
    style: STYLE,
    chars: CHARS,
    ...(wrapped ? { wordWrap: true, colWidths: head.map((_, i) => widths[i] ?? null) as number[] } : {}),
  })
  t.push(...rows.map((row) => row.map(String)))
  return t.toString()
}

/** A two-column table of labelled values. */
export function fieldTable(rows: [string, string | number][]): string {
  const t = new Table({ style: STYLE, chars: CHARS })
  t.push(...rows.map(([label, value]) => ({ [label]: String(value) })))
  return t.toString()
}

/** The sign "no value" takes in tables (a metric the engine leaves null, a time never set). */
export const NONE = '-'

/** A decimal string shortened for reading: at most `digits` decimals, no trailing zeros; null is NONE. */
export function decimal(value: string | number | null | undefined, digits = 4): string {
  if (value === null || value === undefined || value === '') return NONE
  const number = Number(value)
  if (!Number.isFinite(number)) return String(value)
  return Number(number.toFixed(digits)).toString()
}

// Numbers read as on the dashboard, through its formatter (src/format/numbers.ts): money with its unit,
// large volumes in words (165.9M), prices to the tick (./prices.ts).
export { compact, QUOTE }

/** Money with its unit: `1,234.50 USDT`; null is NONE. */
export function money(value: string | number | null | undefined, digits = 2): string {
  return value === null || value === undefined || value === '' ? NONE : moneyText(value, digits)
}

/** Money in a column whose header names the unit (`pnl (USDT)`): `1,234.50`; null is NONE. */
export function amount(value: string | number | null | undefined, digits = 2): string {
  return value === null || value === undefined || value === '' ? NONE : num(value, digits)
}

/** A fraction as a percentage: 0.1234 → 12.34%. */
export function percent(value: string | number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || value === '') return NONE
  const number = Number(value)
  return Number.isFinite(number) ? `${Number((number * 100).toFixed(digits))}%` : String(value)
}

/** Unix ms or an ISO string as ISO 8601 UTC without milliseconds; null is NONE. */
export function time(value: string | number | null | undefined): string {
  if (value === null || value === undefined || value === '') return NONE
  const date = new Date(value)
  return Number.isNaN(date.getTime()) ? String(value) : date.toISOString().replace(/\.\d{3}Z$/, 'Z')
}

/** Seconds as "3d 4h", "2h 5m", "4m 10s". */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return NONE
  const s = Math.round(seconds)
  const units: [number, string][] = [
    [86_400, 'd'],
    [3600, 'h'],
    [60, 'm'],
    [1, 's'],
  ]
  const parts: string[] = []
  let rest = s
  for (const [size, unit] of units) {
    if (rest >= size || (parts.length === 0 && size === 1)) {
      parts.push(`${Math.floor(rest / size)}${unit}`)
      rest %= size
    }
    if (parts.length === 2) break
  }
  return parts.join(' ')
}
