import type { BarSeries } from '../../engine/types.js'

/** Bars as the history store keeps them: eight columns (the same type as backtests/kline-codec.ts's BarColumns). */
export type KlineColumns = Required<Omit<BarSeries, 'symbol' | 'intervalMs'>>

/** The header row some archive files carry (newer ones); older files start with the first bar. */
export const KLINE_CSV_HEADER = 'open_time,open,high,low,close,volume,close_time,quote_volume,count,taker_buy_volume,taker_buy_quote_volume,ignore'
const FIELDS = 12

/** A file whose content is not the archive's kline CSV: its span is fetched over REST instead. */
export class ArchiveFormatError extends Error {
  override name = 'ArchiveFormatError'
}

/**
 * The bars of an archive kline CSV whose open times lie in [from, to), as stored columns. Numbers go
 * through Number() as REST's strings do, so a bar read here is bit-identical to the same bar over REST.
 * Anything unexpected (a field count, a non-number, open times out of order, off the interval's grid or
 * outside the file's span) refuses the whole file rather than storing part of it.
 */
export function parseKlineCsv(text: string, intervalMs: number, from: number, to: number): KlineColumns {
  let at = 0
  if (text.length > 0 && (text.charCodeAt(0) < 48 || text.charCodeAt(0) > 57)) {
    const eol = text.indexOf('\n')
    const header = text.slice(0, eol < 0 ? text.length : eol).replace(/\r$/, '')
    if (header !== KLINE_CSV_HEADER) throw new ArchiveFormatError(`unexpected header "${header.slice(0, 120)}"`)
    at = eol < 0 ? text.length : eol + 1
  }
  const capacity = Math.max(0, Math.ceil((to - from) / intervalMs))
  const columns = {
    openTime: new Float64Array(capacity),
    open: new Float64Array(capacity),
    high: new Float64Array(capacity),
    low: new Float64Array(capacity),
    close: new Float64Array(capacity),
    volume: new Float64Array(capacity),
    quoteVolume: new Float64Array(capacity),
    trades: new Float64Array(capacity),
  }
  const fields = new Array<number>(FIELDS)
  let n = 0
  let line = 0
  let previous = -Infinity
  while (at < text.length) {
    let eol = text.indexOf('\n', at)
    if (eol < 0) eol = text.length
    const end = eol > at && text.charCodeAt(eol - 1) === 13 ? eol - 1 : eol
    line++
    if (end > at) {
      let k = 0
      let start = at
      for (let i = at; i <= end; i++) {
        if (i === end || text.charCodeAt(i) === 44) {
          if (k === FIELDS) throw new ArchiveFormatError(`row ${line}: more than ${FIELDS} fields`)
          // An empty field would read as 0: refused.
          const value = i > start ? Number(text.slice(start, i)) : Number.NaN
          if (!Number.isFinite(value)) throw new ArchiveFormatError(`row ${line}: field ${k + 1} is not a number`)
          fields[k++] = value
          start = i + 1
        }
      }
      if (k !== FIELDS) throw new ArchiveFormatError(`row ${line}: ${k} fields, not ${FIELDS}`)
      const openTime = fields[0]!
      if (openTime < from || openTime >= to || (openTime - from) % intervalMs !== 0) throw new ArchiveFormatError(`row ${line}: open time ${openTime} is not a bar of this file`)
      if (openTime <= previous) throw new ArchiveFormatError(`row ${line}: open time ${openTime} is not after the previous row's`)
      previous = openTime
      columns.openTime[n] = openTime
      columns.open[n] = fields[1]!
      columns.high[n] = fields[2]!
      columns.low[n] = fields[3]!
      columns.close[n] = fields[4]!
      columns.volume[n] = fields[5]!
      columns.quoteVolume[n] = fields[7]!
      columns.trades[n] = fields[8]!
      n++
    }
    at = eol + 1
  }
  return Object.fromEntries(Object.entries(columns).map(([name, column]) => [name, column.subarray(0, n)])) as unknown as KlineColumns
}
