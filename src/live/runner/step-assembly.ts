import type { ClosedBar } from '../brokers/broker.js'

/** One time step of a many-symbol run: an open time and each symbol's bar at it (undefined: none). */
export interface Step {
  openTime: number
  bars: (ClosedBar | undefined)[]
}

/**
 * Where the next step stands:
 * - `complete`: every symbol's bar at it is here;
 * - `final`: it was settled (the stream and REST had their chance): it goes with the bars it has;
 * - `overtaken`: every symbol has been heard at or after it, but some bar at it is missing (a message lost
 *   in the stream): REST has it, or the exchange has no such bar;
 * - `waiting`: some bars of it are here, others may still come from the stream;
 * - `empty`: nothing at or after it yet.
 */
export type StepStatus = 'complete' | 'final' | 'overtaken' | 'waiting' | 'empty'

/**
 * Assembles a many-symbol run's steps from its symbols' kline streams (docs/decisions/live.md, "Multi-symbol runs"):
 * closed bars are buffered per symbol by open time; the next step (the last acted on + one interval) is
 * complete once every symbol's bar at it arrived. A step that cannot complete from the stream is made final
 * by its runner after a REST read of the missing bars (at once when the stream has overtaken it, after a
 * bounded wait otherwise); a symbol the exchange has no bar for is absent from it, as from a backtest's step.
 * Pure: the runner does the reads and the waiting.
 */
export class StepAssembly {
  private readonly buffers: Map<number, ClosedBar>[]
  /** Per symbol, the newest open time heard (stream or REST). */
  private readonly heard: Float64Array
  /** Steps up to this open time are final. */
  private settledThrough = -Infinity
  /** Open time of the next step to act on (NaN until the run knows where it starts). */
  next = Number.NaN

  constructor(
    readonly count: number,
    readonly intervalMs: number,
  ) {
    this.buffers = Array.from({ length: count }, () => new Map())
    this.heard = new Float64Array(count).fill(-Infinity)
  }

  /** The run acts next on the step at `openTime`: anything buffered before it is dropped. */
  startAt(openTime: number): void {
    this.next = openTime
    for (const buffer of this.buffers) for (const t of buffer.keys()) if (t < openTime) buffer.delete(t)
  }

  /** Buffers symbol s's closed bar; false when its step was already acted on (a late bar, not acted on). */
  add(s: number, bar: ClosedBar): boolean {
    if (this.next === this.next && bar.openTime < this.next) return false
    if (!this.buffers[s]!.has(bar.openTime)) this.buffers[s]!.set(bar.openTime, bar)
    if (bar.openTime > this.heard[s]!) this.heard[s] = bar.openTime
    return true
  }

  /** Steps up to `openTime` are final: they go with whatever bars they have. */
  settle(openTime: number): void {
    if (openTime > this.settledThrough) this.settledThrough = openTime
  }

  status(): StepStatus {
    const t = this.next
    if (t !== t) return 'empty'
    let present = 0
    let later = false
    for (let s = 0; s < this.count; s++) {
      if (this.buffers[s]!.has(t)) present++
      if (this.heard[s]! >= t) later = true
    }
    if (present === this.count) return 'complete'
    if (t <= this.settledThrough) return 'final'
    if (!later) return 'empty'
    if (t <= this.frontier()) return 'overtaken'
    return 'waiting'
  }

  /** The newest open time every symbol has been heard at or after: the stream has passed every step up to it. */
  frontier(): number {
    let min = Infinity
    for (let s = 0; s < this.count; s++) min = Math.min(min, this.heard[s]!)
    return min
  }

  /** The newest open time any symbol has been heard at (−Infinity when none). */
  newest(): number {
    let max = -Infinity
    for (let s = 0; s < this.count; s++) max = Math.max(max, this.heard[s]!)
    return max
  }

  /** Symbols missing at least one bar in [next, through]: whose bars a REST read should bring. */
  missing(through: number): number[] {
    const out: number[] = []
    for (let s = 0; s < this.count; s++) {
      for (let t = this.next; t <= through; t += this.intervalMs) {
        if (!this.buffers[s]!.has(t)) {
          out.push(s)
          break
        }
      }
    }
    return out
  }

  /** Takes the next step out (its bars, possibly none) and moves on by one interval. */
  take(): Step {
    const t = this.next
    const bars = this.buffers.map((buffer) => {
      const bar = buffer.get(t)
      buffer.delete(t)
      return bar
    })
    this.next = t + this.intervalMs
    return { openTime: t, bars }
  }
}
