import { KLINE_CSV_COLUMNS, KLINE_CSV_HEADER, type KlineCsvColumn } from '../../binance-formats/kline-csv.js'
import type { BarSeries } from '../../engine/types.js'

/** Bars as the history store keeps them: eight columns (the same type as backtests/kline-codec.ts's BarColumns). */
export type KlineColumns = Required<Omit<BarSeries, 'symbol' | 'intervalMs'>>

const FIELDS = KLINE_CSV_COLUMNS.length
/** The fields kept, by position, in the order of KlineColumns. */
const KEPT = (['open_time', 'open', 'high', 'low', 'close', 'volume', 'quote_volume', 'count'] satisfies KlineCsvColumn[]).map((name) => KLINE_CSV_COLUMNS.indexOf(name))
const [COMMA, NEWLINE, RETURN, DOT, MINUS, ZERO, NINE] = [44, 10, 13, 46, 45, 48, 57]
/** 10^k for the exact fast path below (10^22 is the largest power of ten a double holds exactly). */
const POW10 = Array.from({ length: 23 }, (_, k) => 10 ** k)

/** A file whose content is not the archive's kline CSV: its span is fetched over REST instead. */
export class ArchiveFormatError extends Error {
  override name = 'ArchiveFormatError'
}

/**
 * The bars of an archive kline CSV whose open times lie in [from, to), as stored columns, read from the
 * bytes. Each number equals Number() of its text, as REST's strings are read, so a bar read here is
 * bit-identical to the same bar over REST: a decimal of at most 15 significant digits is its digits as an
 * integer m < 2^53 divided by 10^k with k ≤ 22, both exact doubles, and one IEEE division rounds the
 * quotient correctly (Clinger's fast path); any other text goes through Number(). Measured on 330k 5m
 * rows: ~4× faster than Number() on every field. Anything unexpected (a field count, a kept field not a number, open
 * times out of order, off the interval's grid or outside the file's span) refuses the whole file.
 */
export function parseKlineCsv(csv: Buffer, intervalMs: number, from: number, to: number): KlineColumns {
  let at = 0
  if (csv.length > 0 && (csv[0]! < ZERO || csv[0]! > NINE)) {
    let eol = csv.indexOf(NEWLINE)
    if (eol < 0) eol = csv.length
    const header = csv.toString('latin1', 0, eol).replace(/\r$/, '')
    if (header !== KLINE_CSV_HEADER) throw new ArchiveFormatError(`unexpected header "${header.slice(0, 120)}"`)
    at = eol + 1
  }
  const capacity = Math.max(0, Math.ceil((to - from) / intervalMs))
  const out = Array.from({ length: KEPT.length }, () => new Float64Array(capacity))
  const slot = new Int8Array(FIELDS).fill(-1)
  KEPT.forEach((field, k) => (slot[field] = k))
  const [openTimes] = out as [Float64Array]
  let n = 0
  let line = 0
  let previous = -Infinity
  while (at < csv.length) {
    line++
    if (csv[at] === NEWLINE || csv[at] === RETURN) {
      at++
      continue
    }
    if (n === capacity) throw new ArchiveFormatError(`row ${line}: more rows than the file's span has bars`)
    let field = 0
    for (;;) {
      if (slot[field] === -1) {
        // A field not kept (close time, the taker volumes, "ignore"): only its end is looked for.
        const start = at
        let c = csv[at]
        while (c !== undefined && c !== COMMA && c !== NEWLINE && c !== RETURN) c = csv[++at]
        if (at === start) throw new ArchiveFormatError(`row ${line}: field ${field + 1} is empty`)
        field++
        if (c !== COMMA) break
        at++
        continue
      }
      const start = at
      let negative = false
      if (csv[at] === MINUS) {
        negative = true
        at++
      }
      let mantissa = 0
      let digits = 0 // significant: from the first non-zero one
      let seen = 0 // every digit
      let decimals = -1
      let c = csv[at]
      for (; at < csv.length; c = csv[++at]) {
        if (c! >= ZERO && c! <= NINE) {
          mantissa = mantissa * 10 + (c! - ZERO)
          seen++
          if (mantissa !== 0) digits++
          if (decimals >= 0) decimals++
        } else if (c === DOT && decimals < 0) decimals = 0
        else break
      }
      const end = at
      if (c !== undefined && c !== COMMA && c !== NEWLINE && c !== RETURN) {
        while (at < csv.length && csv[at] !== COMMA && csv[at] !== NEWLINE) at++ // e.g. an exponent: Number() decides
      }
      if (field >= FIELDS) throw new ArchiveFormatError(`row ${line}: more than ${FIELDS} fields`)
      let value: number
      if (end === at && seen > 0 && digits <= 15 && decimals <= 22) {
        value = decimals > 0 ? mantissa / POW10[decimals]! : mantissa
        if (negative) value = -value
      } else value = at > start ? Number(csv.toString('latin1', start, at)) : Number.NaN
      if (!Number.isFinite(value)) throw new ArchiveFormatError(`row ${line}: field ${field + 1} is not a number`)
      out[slot[field]!]![n] = value
      field++
      if (at >= csv.length || csv[at] !== COMMA) break
      at++
    }
    if (field !== FIELDS) throw new ArchiveFormatError(`row ${line}: ${field} fields, not ${FIELDS}`)
    if (csv[at] === RETURN) at++
    if (at < csv.length && csv[at] !== NEWLINE) throw new ArchiveFormatError(`row ${line}: unexpected byte ${csv[at]}`)
    at++
    const openTime = openTimes[n]!
    if (openTime < from || openTime >= to || (openTime - from) % intervalMs !== 0) throw new ArchiveFormatError(`row ${line}: open time ${openTime} is not a bar of this file`)
    if (openTime <= previous) throw new ArchiveFormatError(`row ${line}: open time ${openTime} is not after the previous row's`)
    previous = openTime
    n++
  }
  const column = (k: number) => out[k]!.subarray(0, n)
  return { openTime: column(0), open: column(1), high: column(2), low: column(3), close: column(4), volume: column(5), quoteVolume: column(6), trades: column(7) }
}
