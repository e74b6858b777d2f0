/** Binance kline intervals and their bucket arithmetic (UTC). */

export const INTERVALS = ['1m', '3m', '5m', '15m', '30m', '1h', '2h', '4h', '6h', '8h', '12h', '1d', '3d', '1w', '1M'] as const
export type Interval = (typeof INTERVALS)[number]

export const MINUTE = 60_000
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR
const WEEK = 7 * DAY
// 1970-01-01 was a Thursday; Binance's weekly klines open on Monday 00:00 UTC.
const MONDAY_OFFSET = 4 * DAY

export const FIXED_MS: Record<Exclude<Interval, '1M'>, number> = {
  '1m': MINUTE,
  '3m': 3 * MINUTE,
  '5m': 5 * MINUTE,
  '15m': 15 * MINUTE,
  '30m': 30 * MINUTE,
  '1h': HOUR,
  '2h': 2 * HOUR,
  '4h': 4 * HOUR,
  '6h': 6 * HOUR,
  '8h': 8 * HOUR,
  '12h': 12 * HOUR,
  '1d': DAY,
  '3d': 3 * DAY,
  '1w': WEEK,
}

export function isInterval(value: string): value is Interval {
  return (INTERVALS as readonly string[]).includes(value)
}

/** The interval's length in ms; a month counts as 31 days where only an upper bound is needed. */
export function nominalMs(interval: Interval): number {
  return interval === '1M' ? 31 * DAY : FIXED_MS[interval]
}

/** Open time of the bucket containing `time`. */
export function bucketStart(interval: Interval, time: number): number {
  if (interval === '1M') {
    const date = new Date(time)
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)
  }
  const ms = FIXED_MS[interval]
  const offset = interval === '1w' ? MONDAY_OFFSET : 0
  return Math.floor((time - offset) / ms) * ms + offset
}

/** Open time of the bucket after the one opening at `start`. */
export function nextBucket(interval: Interval, start: number): number {
  if (interval === '1M') {
    const date = new Date(start)
    return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
  }
  return start + FIXED_MS[interval]
}

/**
 * Whether bars of `target` are exact aggregates of bars of `base`: every target bucket boundary is a
 * base boundary (months and Monday-weeks start at midnight, so any base up to a day divides them).
 */
export function aggregatesFrom(target: Interval, base: Interval): boolean {
  if (base === '1M') return target === '1M'
  const baseMs = FIXED_MS[base]
  if (target === '1M') return DAY % baseMs === 0
  const targetMs = FIXED_MS[target]
  if (targetMs % baseMs !== 0) return false
  return target === '1w' ? MONDAY_OFFSET % baseMs === 0 : true
}
