import type { BarInput } from '../../engine/growing-series.js'
import type { BarSeries, DetailBars, ExitRules } from '../../engine/types.js'

/** A minute: the detail bars of a dry run's protective exits are 1m klines (last or mark price). */
export const MINUTE_MS = 60_000

/** Which minutes a run's exits are examined on: last-price klines, mark-price klines, or none (the strategy bar itself). */
export type MinuteKind = 'last' | 'mark'

/** The minutes that protective exits with `rules` examine under strategy bars of `intervalMs`; undefined when none. */
export function minuteKind(rules: ExitRules | undefined, intervalMs: number): MinuteKind | undefined {
  if (rules?.trigger === 'mark') return 'mark'
  // Last-price detail must be finer than the strategy's bars (ExitGuard): a 1m strategy is examined on its own bars.
  return intervalMs > MINUTE_MS ? 'last' : undefined
}

/**
 * The detail bars a paper broker's ExitGuard examines, per symbol: exactly the minutes of the strategy bar
 * being stepped, put in place before each step (a window, not a series grown for the run's life: a 1h run
 * holds 60 minutes, not 43,200 a month). The guard keeps a cursor into each detail series and seeks forward
 * from it to the bar's open time; every window starts at or after that open time, so the cursor stays at 0
 * and the seek finds the bar's first minute at once, or none (then the strategy bar itself is examined, as
 * in a backtest where the exchange lacks a minute).
 */
export class ExitWindow {
  /** Per symbol, what the guard is given: its one series, whose arrays set() replaces. */
  readonly detail: DetailBars[]
  private readonly series: BarSeries[]

  constructor(
    symbols: readonly string[],
    readonly kind: MinuteKind,
  ) {
    this.series = symbols.map((symbol) => ({ symbol, intervalMs: MINUTE_MS, ...columns(0) }))
    this.detail = this.series.map((series) => (kind === 'mark' ? { mark: [series] } : { bars: [series] }))
  }

  /** Symbol s's minutes of the bar about to be stepped (ascending, inside it); none: the bar is examined on itself. */
  set(s: number, minutes: readonly BarInput[] | undefined): void {
    const bars = minutes ?? []
    const next = columns(bars.length)
    bars.forEach((bar, k) => {
      next.openTime[k] = bar.openTime
      next.open[k] = bar.open
      next.high[k] = bar.high
      next.low[k] = bar.low
      next.close[k] = bar.close
      next.volume[k] = bar.volume
    })
    Object.assign(this.series[s]!, next)
  }
}

function columns(n: number) {
  return { openTime: new Float64Array(n), open: new Float64Array(n), high: new Float64Array(n), low: new Float64Array(n), close: new Float64Array(n), volume: new Float64Array(n) }
}
