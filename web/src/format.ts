/** Display helpers: decimal strings stay exact in tables; numbers are only rounded for reading. */

// Numbers (prices at the tick, volumes in words, money in USDT) read the same in the CLI: one formatter.
export { compact, money, num, price, QUOTE } from '../../src/format/numbers.js'

export function pct(value: string | number | null | undefined, digits = 2): string {
  if (value === null || value === undefined || value === '') return '—'
  const n = typeof value === 'number' ? value : Number(value)
  return Number.isFinite(n) ? `${(n * 100).toFixed(digits)} %` : String(value)
}

/** `2024-01-02 03:04` (UTC) from an ISO time or Unix ms. */
export function time(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '—'
  const date = new Date(value)
  if (Number.isNaN(date.getTime())) return String(value)
  return date.toISOString().slice(0, 16).replace('T', ' ')
}

export function day(value: string | number): string {
  return new Date(value).toISOString().slice(0, 10)
}

export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—'
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`
  if (seconds < 86400 * 2) return `${(seconds / 3600).toFixed(1)} h`
  return `${(seconds / 86400).toFixed(1)} d`
}

/** A class for a signed amount: gains and losses read apart at a glance. */
export function sign(value: string | number | null | undefined): string {
  const n = Number(value)
  return !Number.isFinite(n) || n === 0 ? '' : n > 0 ? 'gain' : 'loss'
}
