import type { Bars } from './recorded/bars.js'
import { unit } from '../common/seeded.js'

/**
 * The derived price path inside one recorded bar: straight lines from the open to the first
 * extreme, to the second, to the close. Which extreme comes first and when are seeded by symbol and
 * bar time (the high first in 30% of rising bars, 70% of falling ones), so a partial bar, the 24h
 * window and every trade read the same path, and a bar, once complete, equals the recording.
 */
export interface Knots {
  t0: number
  t1: number
  t2: number
  t3: number
  p0: number
  p1: number
  p2: number
  p3: number
}

export function knots(bars: Bars, i: number, seed: number): Knots {
  const t0 = bars.time(i)
  const open = bars.open(i)
  const close = bars.close(i)
  const highFirst = unit(seed, t0, 3) < (close >= open ? 0.3 : 0.7)
  return {
    t0,
    t1: t0 + bars.step * (0.05 + 0.4 * unit(seed, t0, 1)),
    t2: t0 + bars.step * (0.55 + 0.4 * unit(seed, t0, 2)),
    t3: t0 + bars.step,
    p0: open,
    p1: highFirst ? bars.high(i) : bars.low(i),
    p2: highFirst ? bars.low(i) : bars.high(i),
    p3: close,
  }
}

function lerp(ta: number, pa: number, tb: number, pb: number, t: number): number {
  return tb === ta ? pb : pa + ((pb - pa) * (t - ta)) / (tb - ta)
}

/** The path's price at `time` (clamped to the bar). */
export function priceOnPath(k: Knots, time: number): number {
  if (time <= k.t0) return k.p0
  if (time < k.t1) return lerp(k.t0, k.p0, k.t1, k.p1, time)
  if (time < k.t2) return lerp(k.t1, k.p1, k.t2, k.p2, time)
  if (time < k.t3) return lerp(k.t2, k.p2, k.t3, k.p3, time)
  return k.p3
}

/** Highest and lowest price of the path over [from, to]: its ends and the knots between. */
export function rangeOnPath(k: Knots, from: number, to: number): { high: number; low: number } {
  const a = priceOnPath(k, from)
  const b = priceOnPath(k, to)
  let high = Math.max(a, b)
  let low = Math.min(a, b)
  if (from < k.t1 && k.t1 < to) {
    high = Math.max(high, k.p1)
    low = Math.min(low, k.p1)
  }
  if (from < k.t2 && k.t2 < to) {
    high = Math.max(high, k.p2)
    low = Math.min(low, k.p2)
  }
  return { high, low }
}

/**
 * The derived share of a bar's volume bought by takers: about half, leaning with the bar's
 * direction (up to ±12 points for a bar that closes at its high or low), plus seeded noise.
 */
export function takerBuyShare(bars: Bars, i: number, seed: number): number {
  const range = bars.high(i) - bars.low(i)
  const body = range > 0 ? (bars.close(i) - bars.open(i)) / range : 0
  const share = 0.5 + 0.12 * Math.tanh(3 * body) + 0.06 * (unit(seed, bars.time(i), 4) - 0.5)
  return Math.min(0.7, Math.max(0.3, share))
}

/** Derived quote volume of a bar: its volume at the bar's typical price (o+h+l+c)/4. */
export function quoteVolume(bars: Bars, i: number): number {
  return (bars.volume(i) * (bars.open(i) + bars.high(i) + bars.low(i) + bars.close(i))) / 4
}
