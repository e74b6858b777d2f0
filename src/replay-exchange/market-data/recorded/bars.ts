import type { Interval } from '../../common/intervals.js'

/**
 * A series of OHLCV bars at one base interval, sorted by open time (gaps allowed). Recorded files
 * and the scaled views that stand in for unrecorded symbols share this shape.
 */
export interface Bars {
  readonly interval: Interval
  /** The base interval in ms. */
  readonly step: number
  readonly length: number
  time(i: number): number
  open(i: number): number
  high(i: number): number
  low(i: number): number
  close(i: number): number
  volume(i: number): number
}

export interface BarColumns {
  time: Float64Array
  open: Float64Array
  high: Float64Array
  low: Float64Array
  close: Float64Array
  volume: Float64Array
}

export class RecordedBars implements Bars {
  readonly length: number
  constructor(
    readonly interval: Interval,
    readonly step: number,
    private readonly c: BarColumns,
  ) {
    this.length = c.time.length
  }
  time(i: number): number {
    return this.c.time[i]!
  }
  open(i: number): number {
    return this.c.open[i]!
  }
  high(i: number): number {
    return this.c.high[i]!
  }
  low(i: number): number {
    return this.c.low[i]!
  }
  close(i: number): number {
    return this.c.close[i]!
  }
  volume(i: number): number {
    return this.c.volume[i]!
  }
}

/** Index of the first bar opening at or after `time` (length when none). */
export function firstAtOrAfter(bars: Bars, time: number): number {
  let lo = 0
  let hi = bars.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (bars.time(mid) < time) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Index of the bar whose span [open, open + step) contains `time`, or -1 (before the first bar or in a gap). */
export function barContaining(bars: Bars, time: number): number {
  const next = firstAtOrAfter(bars, time + 1)
  const index = next - 1
  if (index < 0) return -1
  return time < bars.time(index) + bars.step ? index : -1
}

export function firstTime(bars: Bars): number {
  return bars.length > 0 ? bars.time(0) : Number.POSITIVE_INFINITY
}

/** Close time (exclusive) of the last bar. */
export function endTime(bars: Bars): number {
  return bars.length > 0 ? bars.time(bars.length - 1) + bars.step : Number.NEGATIVE_INFINITY
}

/** Index of the first element of an ascending array that is at least `value` (length when none). */
export function lowerBound(values: Float64Array, value: number): number {
  let lo = 0
  let hi = values.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (values[mid]! < value) lo = mid + 1
    else hi = mid
  }
  return lo
}
