import type { BarGap, BarSeries, FundingSeries } from './types.js'

/** First index whose value is ≥ x (values ascending). */
export function lowerBound(values: Float64Array, x: number): number {
  let lo = 0
  let hi = values.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (values[mid]! < x) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** The bars with start ≤ open_time ≤ end, as views (no copy). */
export function barsInRange(series: BarSeries, start: number, end: number): BarSeries {
  const from = lowerBound(series.openTime, start)
  const to = lowerBound(series.openTime, end + 1)
  const view = (a: Float64Array) => a.subarray(from, to)
  return {
    symbol: series.symbol,
    intervalMs: series.intervalMs,
    openTime: view(series.openTime),
    open: view(series.open),
    high: view(series.high),
    low: view(series.low),
    close: view(series.close),
    volume: view(series.volume),
    ...(series.quoteVolume ? { quoteVolume: view(series.quoteVolume) } : {}),
    ...(series.trades ? { trades: view(series.trades) } : {}),
  }
}

/** Funding events with from ≤ time < to, as views. */
export function fundingInRange(funding: FundingSeries, from: number, to: number): FundingSeries {
  const a = lowerBound(funding.time, from)
  const b = lowerBound(funding.time, to)
  return { time: funding.time.subarray(a, b), rate: funding.rate.subarray(a, b), markPrice: funding.markPrice.subarray(a, b) }
}

/**
 * Missing bars in [start, end]: every open time on the interval grid (multiples of the interval since
 * the epoch, which is how Binance aligns 1m … 1d klines) that has no bar, grouped into runs. Also fails
 * fast on corrupt input: open times must be strictly ascending and on the grid.
 */
export function findGaps(series: BarSeries, start: number, end: number): BarGap[] {
  const { openTime, intervalMs: interval, symbol } = series
  const gaps: BarGap[] = []
  let expected = Math.ceil(start / interval) * interval
  for (let i = 0; i < openTime.length; i++) {
    const t = openTime[i]!
    if (t !== expected) {
      if (t < expected || t % interval !== 0) throw gridError(series, i, expected)
      gaps.push({ symbol, from: expected, to: t - interval })
    }
    expected = t + interval
  }
  trailingGap(gaps, series, expected, end)
  return gaps
}

/** Records the missing bars from `expected` (the open time after the last bar) to the last grid time ≤ end. */
export function trailingGap(gaps: BarGap[], series: BarSeries, expected: number, end: number): void {
  const last = Math.floor(end / series.intervalMs) * series.intervalMs
  if (expected <= last) gaps.push({ symbol: series.symbol, from: expected, to: last })
}

/** The error for bar i of a series whose open times leave the grid or do not ascend. */
export function gridError(series: BarSeries, i: number, expected: number): RangeError {
  const t = series.openTime[i]
  return new RangeError(`${series.symbol}: bar open times must ascend on the ${series.intervalMs} ms grid (bar ${i} at ${t}, expected ${expected} or later)`)
}
