import { type Bars, RecordedBars } from './bars.js'
import { checkAscending, parseCsv, readText } from './csv.js'
import type { SampleKind } from './data-files.js'
import { type Interval, nominalMs } from '../../common/intervals.js'

/** Loaders for the recorded files; each parses one file completely and checks its order. */

const KLINE_COLUMNS = ['open_time', 'open', 'high', 'low', 'close', 'volume'] as const

function barsFrom(columns: Float64Array[], file: string, interval: Interval): Bars {
  const [time, open, high, low, close, volume] = columns as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array]
  checkAscending(time, file)
  return new RecordedBars(interval, nominalMs(interval), { time, open, high, low, close, volume })
}

export function loadKlines(file: string, interval: Interval): Bars {
  return barsFrom(parseCsv(readText(file), file, { numeric: KLINE_COLUMNS }).numbers, file, interval)
}

/** Recorded mark-price klines: Binance's markPriceKlines carry no volume (always 0), and the files none. */
export function loadMarkKlines(file: string, interval: Interval): Bars {
  const [time, open, high, low, close] = parseCsv(readText(file), file, { numeric: KLINE_COLUMNS.slice(0, 5) }).numbers as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array]
  checkAscending(time, file)
  return new RecordedBars(interval, nominalMs(interval), { time, open, high, low, close, volume: new Float64Array(time.length) })
}

/** `multi-symbol-1d.csv.gz`: daily bars of several symbols, grouped by its symbol column. */
export function loadMultiDaily(file: string): Map<string, Bars> {
  const { rows, numbers, texts } = parseCsv(readText(file), file, { numeric: KLINE_COLUMNS, text: ['symbol'] })
  const symbols = texts[0]!
  const out = new Map<string, Bars>()
  let start = 0
  for (let row = 1; row <= rows; row++) {
    if (row < rows && symbols[row] === symbols[start]) continue
    const symbol = symbols[start]!
    if (out.has(symbol)) throw new Error(`${file}: rows of ${symbol} are not contiguous`)
    out.set(symbol, barsFrom(numbers.map((column) => column.slice(start, row)), `${file} (${symbol})`, '1d'))
    start = row
  }
  if (out.size === 0) throw new Error(`${file}: no rows`)
  return out
}

export interface FundingRows {
  time: Float64Array
  rate: Float64Array
  /** NaN where the recording has no mark price. */
  markPrice: Float64Array
}

export function loadFunding(file: string): FundingRows {
  const { numbers } = parseCsv(readText(file), file, { numeric: ['fundingTime', 'fundingRate', 'markPrice'], optional: ['markPrice'] })
  const [time, rate, markPrice] = numbers as [Float64Array, Float64Array, Float64Array]
  checkAscending(time, file)
  return { time, rate, markPrice }
}

export interface SampleRows {
  time: Float64Array
  /** Columns by Binance field name, e.g. longShortRatio, longAccount, sumOpenInterest. */
  values: Record<string, Float64Array>
}

const SAMPLE_COLUMNS: Record<SampleKind, string[]> = {
  globalLongShortAccountRatio: ['longShortRatio', 'longAccount', 'shortAccount'],
  topLongShortAccountRatio: ['longShortRatio', 'longAccount', 'shortAccount'],
  topLongShortPositionRatio: ['longShortRatio', 'longAccount', 'shortAccount'],
  openInterestHist: ['sumOpenInterest', 'sumOpenInterestValue'],
}

export function loadSamples(file: string, kind: SampleKind): SampleRows {
  const names = SAMPLE_COLUMNS[kind]
  const { numbers } = parseCsv(readText(file), file, { numeric: ['timestamp', ...names] })
  const time = numbers[0]!
  checkAscending(time, file)
  const values: Record<string, Float64Array> = {}
  names.forEach((name, i) => (values[name] = numbers[i + 1]!))
  return { time, values }
}

export function loadJson(file: string): unknown {
  return JSON.parse(readText(file))
}
