import type { EquityPoint } from './types.js'

export const DAY_MS = 86_400_000

/**
 * The daily UTC equity curve as the bar loop produces it: (start, capital), then the equity at every UTC
 * midnight reached (marked at the last close before it), then the end of the last bar. Midnights inside a
 * gap repeat the last known equity, so the points stay one day apart and daily returns stay daily.
 */
export class DailyCurve {
  readonly times: number[] = []
  readonly values: number[] = []
  /** The next midnight to record; the loop compares each bar's open time against it. */
  nextDay: number

  constructor(start: number, capital: number) {
    this.times.push(start)
    this.values.push(capital)
    this.nextDay = Math.floor(start / DAY_MS) * DAY_MS + DAY_MS
  }

  /** Records every midnight ≤ time at `equity` (the equity at the last close before `time`). */
  reach(time: number, equity: number): void {
    while (this.nextDay <= time) {
      this.times.push(this.nextDay)
      this.values.push(equity)
      this.nextDay += DAY_MS
    }
  }

  /** Records the midnights up to `end` and, unless `end` is one of them, the final point at `end`. */
  finish(end: number, equity: number): void {
    this.reach(end, equity)
    if (this.times[this.times.length - 1]! < end) {
      this.times.push(end)
      this.values.push(equity)
    }
  }

  points(): EquityPoint[] {
    return this.times.map((time, k) => [time, this.values[k]!])
  }
}
