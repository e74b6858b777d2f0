import { TIMEFRAME_MS } from '../strategies/timeframes.js'
import type { ExitLevels } from './exit-levels.js'
import type { Ledger } from './ledger.js'
import type { BarSeries, DetailBars, ExitReason, ExitRules } from './types.js'

/** A run with trigger 'mark' has no mark-price bars for `symbol` at all: the caller reports NO_DATA. */
export class MissingMarkBars extends Error {
  constructor(readonly symbol: string) {
    super(`${symbol}: no mark-price bars in the range, which exits with trigger mark need`)
    this.name = 'MissingMarkBars'
  }
}

/**
 * Protective exits of a run (DESIGN §10), for the steppers: the levels of each position come from the
 * ledger (ExitLevels), this class walks them through each strategy bar that holds a protected position.
 *
 * Per strategy bar [t, t + interval) it examines the finest detail series holding every bar inside it
 * (else the strategy bar itself), bar by bar: (1) the open: a level already crossed fills at the open;
 * (2) the range: a level inside [low, high] fills at the level. Stop-side levels (stop loss, trailing
 * stop, liquidation price) are crossed in order of nearness to the open; a stop-side and a target-side
 * level in one examined bar: the stop side, counted in `ambiguous`. The trailing extreme moves after each
 * bar's check. After a protective exit the position stays flat until the strategy states another target
 * (the latch: admits()).
 *
 * The steppers call, per strategy bar of symbol s: atOpen before the fills, admits/filled around each
 * fill, walk after them, stated with the levels a signal states at the close.
 */
export class ExitGuard {
  readonly levels: ExitLevels
  /** Per symbol, examined bars whose range held a stop-side and a target-side level. */
  readonly ambiguous: Float64Array
  /** A signal has stated a level (a price or a removal) in this run. */
  signalled = false
  /** The trailing callback fraction; NaN without trailing. */
  private readonly callback: number
  /** The rules derive a level for every position. */
  private readonly configured: boolean
  private readonly mark: boolean
  /** Per symbol, the series examined in place of strategy bars, finest first; their cursors. */
  private readonly candidates: BarSeries[][]
  private readonly cursors: Int32Array[]
  /** Per symbol, strategy bars examined: [0] on themselves, [k + 1] on candidates[k]. */
  private readonly counts: Float64Array[]
  /** Per symbol, the strategy bar (open time) chosen for last, the candidate chosen (−1 = itself) and its first bar. */
  private readonly chosenAt: Float64Array
  private readonly chosen: Int32Array
  private readonly chosenFrom: Int32Array

  /** `detail[s]`: symbol s's finer bars (last-price, or mark-price with trigger mark); may be empty for a runner to grow. */
  constructor(
    readonly ledger: Ledger,
    rules: ExitRules | undefined,
    readonly intervalMs: number,
    detail: readonly (DetailBars | undefined)[] = [],
  ) {
    this.levels = ledger.protect(rules)
    const count = ledger.symbols.length
    this.callback = rules?.trailingStop ?? Number.NaN
    this.configured = rules !== undefined && (rules.stopLoss !== undefined || rules.takeProfit !== undefined || rules.trailingStop !== undefined)
    this.mark = rules?.trigger === 'mark'
    this.candidates = Array.from({ length: count }, (_, s) => {
      const given = (this.mark ? detail[s]?.mark : detail[s]?.bars) ?? []
      for (const series of given) {
        const d = series.intervalMs
        if (!(d > 0 && intervalMs % d === 0 && (this.mark ? d <= intervalMs : d < intervalMs))) {
          throw new RangeError(`${series.symbol}: detail bars of ${d} ms do not divide the ${intervalMs} ms strategy bars`)
        }
      }
      return [...given].sort((a, b) => a.intervalMs - b.intervalMs)
    })
    this.cursors = this.candidates.map((list) => new Int32Array(list.length))
    this.counts = this.candidates.map((list) => new Float64Array(list.length + 1))
    this.ambiguous = new Float64Array(count)
    this.chosenAt = new Float64Array(count).fill(Number.NaN)
    this.chosen = new Int32Array(count)
    this.chosenFrom = new Int32Array(count)
  }

  /**
   * Before the fills at strategy bar i's open: the carried position exits at the open (its trigger price
   * there) when that crosses one of its levels, as a carried position is liquidated at the open before
   * the fills (the caller checks the liquidation price first).
   */
  atOpen(s: number, series: BarSeries, i: number): void {
    const q = this.ledger.qty[s]!
    if (q === 0 || !this.protects(s)) return
    const t = series.openTime[i]!
    this.select(s, t)
    const k = this.chosen[s]!
    const price = this.mark && k >= 0 ? this.candidates[s]![k]!.open[this.chosenFrom[s]!]! : series.open[i]!
    const stop = this.stopOf(s, q)
    const trail = this.trailOf(s, q)
    const take = this.takeOf(s, q)
    if (q > 0 ? price <= stop || price <= trail : price >= stop || price >= trail) {
      this.exit(s, price, t, q > 0 ? (stop >= trail ? 'stop_loss' : 'trailing_stop') : stop <= trail ? 'stop_loss' : 'trailing_stop')
    } else if (q > 0 ? price >= take : price <= take) {
      this.exit(s, price, t, 'take_profit')
    }
  }

  /**
   * The latch: whether a target may be pended (at a close) or filled (at an open after an exit there).
   * After a protective exit only a target other than the one in force passes, and it releases the latch.
   */
  admits(s: number, target: number): boolean {
    const x = this.levels
    if (x.exitLatched[s] === 0) return true
    if (target === x.exitTarget[s]) return false
    x.exitLatched[s] = 0
    return true
  }

  /** Symbol s was moved to `target` at an open: the target in force from now on. */
  filled(s: number, target: number): void {
    this.levels.exitTarget[s] = target
  }

  /**
   * Nothing to check for symbol s: no rules, no signal level in force or pending, no latch. Its bars are then
   * what they are without exits (a walk checks only the liquidation price), so a stepper may skim them.
   */
  idle(s: number): boolean {
    const x = this.levels
    return (
      !this.configured &&
      x.exitLatched[s] === 0 &&
      x.exitModuleStop[s] !== x.exitModuleStop[s] &&
      x.exitModuleTake[s] !== x.exitModuleTake[s] &&
      x.exitPendingStop[s] !== x.exitPendingStop[s] &&
      x.exitPendingTake[s] !== x.exitPendingTake[s]
    )
  }

  /** The levels a signal stated for symbol s at a close (NaN keep, 0 remove, > 0 set), applied after the next open's fill. */
  stated(s: number, stop: number, take: number): void {
    if (stop !== stop && take !== take) return
    const x = this.levels
    if (stop === stop) x.exitPendingStop[s] = stop
    if (take === take) x.exitPendingTake[s] = take
    this.signalled = true
  }

  /**
   * After the fills at strategy bar i's open: applies the levels stated at the previous close (`prevClose`;
   * one already on the wrong side of it exits at this open), then walks the bar for the position held:
   * on the examined bars when it has levels, else the liquidation check on the strategy bar alone.
   */
  walk(s: number, series: BarSeries, i: number, prevClose: number): void {
    const x = this.levels
    if (x.exitPendingStop[s] === x.exitPendingStop[s] || x.exitPendingTake[s] === x.exitPendingTake[s]) this.applyStated(s, series, i, prevClose)
    const q = this.ledger.qty[s]!
    if (q === 0) return
    const interval = this.intervalMs
    if (!this.protects(s)) {
      const liq = this.ledger.liq[s]!
      if (q > 0 ? series.low[i]! <= liq : series.high[i]! >= liq) this.ledger.liquidate(s, series.openTime[i]! + interval - 1)
      return
    }
    this.select(s, series.openTime[i]!)
    const k = this.chosen[s]!
    if (k < 0) {
      this.examine(s, q, series, i, i + 1, interval)
    } else {
      const detail = this.candidates[s]![k]!
      const from = this.chosenFrom[s]!
      this.examine(s, q, detail, from, from + interval / detail.intervalMs, detail.intervalMs)
    }
  }

  /** Per symbol, the strategy bars examined by the bars examined ('1m', 'mark_1m', …; the strategy's timeframe for itself). */
  resolution(): Record<string, Record<string, number>> {
    const out: Record<string, Record<string, number>> = {}
    this.ledger.symbols.forEach((symbol, s) => {
      const counts = this.counts[s]!
      const bySeries: Record<string, number> = {}
      if (counts[0]! > 0) bySeries[intervalLabel(this.intervalMs)] = counts[0]!
      this.candidates[s]!.forEach((series, k) => {
        if (counts[k + 1]! > 0) bySeries[(this.mark ? 'mark_' : '') + intervalLabel(series.intervalMs)] = counts[k + 1]!
      })
      out[symbol] = bySeries
    })
    return out
  }

  /** Whether symbol s's position (held) has any level besides its liquidation price. */
  private protects(s: number): boolean {
    const x = this.levels
    return this.configured || x.exitModuleStop[s] === x.exitModuleStop[s] || x.exitModuleTake[s] === x.exitModuleTake[s]
  }

  /** Chooses, once per strategy bar, the finest candidate series holding every bar of [t, t + interval), and counts it. */
  private select(s: number, t: number): void {
    if (this.chosenAt[s] === t) return
    this.chosenAt[s] = t
    const list = this.candidates[s]!
    const cursor = this.cursors[s]!
    const interval = this.intervalMs
    let chosen = -1
    for (let k = 0; k < list.length; k++) {
      const series = list[k]!
      const openTime = series.openTime
      const d = series.intervalMs
      const j = seek(openTime, cursor[k]!, t)
      cursor[k] = j
      const last = j + interval / d - 1
      // Open times ascend on the series' grid, so the first and last in place mean every bar between is.
      if (last < openTime.length && openTime[j] === t && openTime[last] === t + interval - d) {
        chosen = k
        this.chosenFrom[s] = j
        break
      }
    }
    this.chosen[s] = chosen
    this.counts[s]![chosen + 1]!++
  }

  private examine(s: number, q: number, bars: BarSeries, from: number, to: number, d: number): void {
    if (q > 0) this.examineLong(s, bars.openTime, bars.open, bars.high, bars.low, from, to, d)
    else this.examineShort(s, bars.openTime, bars.open, bars.high, bars.low, from, to, d)
  }

  /**
   * The hot loop of a run with exits (bench/exits.ts): bars [from, to) of one series for a long. `floor` is
   * the highest stop-side level (the one a fall from the open crosses first); everything else is rare.
   */
  private examineLong(s: number, openTime: Float64Array, open: Float64Array, high: Float64Array, low: Float64Array, from: number, to: number, d: number): void {
    const x = this.levels
    const stop = this.stopOf(s, 1)
    const take = this.takeOf(s, 1)
    const liq = this.ledger.liq[s]!
    const callback = this.callback
    let best = x.exitBest[s]!
    let trail = -Infinity
    // The high at which the trailing extreme moves: the activation price until trailing, then the best.
    let raiseAt = Infinity
    if (callback === callback) {
      if (best === best) {
        trail = x.below(s, best * (1 - callback))
        raiseAt = best
      } else {
        raiseAt = x.exitActivation[s]!
      }
    }
    let floor = Math.max(stop, trail, liq)
    for (let j = from; j < to; j++) {
      const o = open[j]!
      if (o <= floor || o >= take) {
        x.exitBest[s] = best
        if (o <= liq) this.ledger.liquidate(s, openTime[j]!)
        else this.exit(s, o, openTime[j]!, o <= floor ? (stop >= trail ? 'stop_loss' : 'trailing_stop') : 'take_profit')
        return
      }
      const l = low[j]!
      const h = high[j]!
      if (l <= floor) {
        if (h >= take) this.ambiguous[s]!++
        x.exitBest[s] = best
        const time = openTime[j]! + d - 1
        if (liq > stop && liq > trail) this.ledger.liquidate(s, time)
        else if (stop >= trail) this.exit(s, stop, time, 'stop_loss')
        else this.exit(s, trail, time, 'trailing_stop')
        return
      }
      if (h >= take) {
        x.exitBest[s] = best
        this.exit(s, take, openTime[j]! + d - 1, 'take_profit')
        return
      }
      if (h >= raiseAt) {
        best = h
        raiseAt = h
        trail = x.below(s, h * (1 - callback))
        floor = Math.max(stop, trail, liq)
      }
    }
    x.exitBest[s] = best
  }

  /** examineLong mirrored: `ceiling` is the lowest stop-side level. */
  private examineShort(s: number, openTime: Float64Array, open: Float64Array, high: Float64Array, low: Float64Array, from: number, to: number, d: number): void {
    const x = this.levels
    const stop = this.stopOf(s, -1)
    const take = this.takeOf(s, -1)
    const recorded = this.ledger.liq[s]!
    const liq = recorded > 0 ? recorded : Infinity
    const callback = this.callback
    let best = x.exitBest[s]!
    let trail = Infinity
    let raiseAt = -Infinity
    if (callback === callback) {
      if (best === best) {
        trail = x.above(s, best * (1 + callback))
        raiseAt = best
      } else {
        raiseAt = x.exitActivation[s]!
      }
    }
    let ceiling = Math.min(stop, trail, liq)
    for (let j = from; j < to; j++) {
      const o = open[j]!
      if (o >= ceiling || o <= take) {
        x.exitBest[s] = best
        if (o >= liq) this.ledger.liquidate(s, openTime[j]!)
        else this.exit(s, o, openTime[j]!, o >= ceiling ? (stop <= trail ? 'stop_loss' : 'trailing_stop') : 'take_profit')
        return
      }
      const l = low[j]!
      const h = high[j]!
      if (h >= ceiling) {
        if (l <= take) this.ambiguous[s]!++
        x.exitBest[s] = best
        const time = openTime[j]! + d - 1
        if (liq < stop && liq < trail) this.ledger.liquidate(s, time)
        else if (stop <= trail) this.exit(s, stop, time, 'stop_loss')
        else this.exit(s, trail, time, 'trailing_stop')
        return
      }
      if (l <= take) {
        x.exitBest[s] = best
        this.exit(s, take, openTime[j]! + d - 1, 'take_profit')
        return
      }
      if (l <= raiseAt) {
        best = l
        raiseAt = l
        trail = x.above(s, l * (1 + callback))
        ceiling = Math.min(stop, trail, liq)
      }
    }
    x.exitBest[s] = best
  }

  /** Applies the levels stated at the last close to the position the fills left; one on the wrong side of that close exits at this open. */
  private applyStated(s: number, series: BarSeries, i: number, prevClose: number): void {
    const reason = this.applyPending(s, prevClose)
    if (reason !== undefined) this.exit(s, series.open[i]!, series.openTime[i]!, reason)
  }

  /**
   * Applies the levels stated at the last close to symbol s's position held now, at the tick toward its side;
   * answers the kind of the first one already on the wrong side of `price` (NaN: none is), without acting on it.
   * The walk exits there; a live run, whose exchange holds the levels, applies them right after its fill.
   */
  applyPending(s: number, price: number): 'stop_loss' | 'take_profit' | undefined {
    const x = this.levels
    const stop = x.exitPendingStop[s]!
    const take = x.exitPendingTake[s]!
    x.exitPendingStop[s] = Number.NaN
    x.exitPendingTake[s] = Number.NaN
    const q = this.ledger.qty[s]!
    if (q === 0) return undefined
    let reason: 'stop_loss' | 'take_profit' | undefined
    if (stop === stop) {
      if (stop > 0) {
        const level = q > 0 ? x.below(s, stop) : x.above(s, stop)
        x.exitModuleStop[s] = level
        if (q > 0 ? level >= price : level <= price) reason = 'stop_loss'
      } else {
        x.exitModuleStop[s] = Number.NaN
      }
    }
    if (take === take) {
      if (take > 0) {
        const level = q > 0 ? x.above(s, take) : x.below(s, take)
        x.exitModuleTake[s] = level
        if (reason === undefined && (q > 0 ? level <= price : level >= price)) reason = 'take_profit'
      } else {
        x.exitModuleTake[s] = Number.NaN
      }
    }
    return reason
  }

  /** A protective exit: the ledger closes the position (slippage applied), the latch engages. */
  private exit(s: number, price: number, time: number, reason: ExitReason): void {
    this.ledger.exit(s, price, time, reason)
    this.levels.latch(s)
  }

  /** The stop-loss level in force for a position of side `side`; ∓Infinity for none. */
  private stopOf(s: number, side: number): number {
    const level = this.levels.stopLevel(s)
    return level === level ? level : side > 0 ? -Infinity : Infinity
  }

  private takeOf(s: number, side: number): number {
    const level = this.levels.takeLevel(s)
    return level === level ? level : side > 0 ? Infinity : -Infinity
  }

  private trailOf(s: number, side: number): number {
    const level = this.levels.trailLevel(s, side)
    return level === level ? level : side > 0 ? -Infinity : Infinity
  }
}

/** The first index ≥ j whose open time is ≥ t: galloping from the cursor, then bisecting. */
function seek(openTime: Float64Array, j: number, t: number): number {
  const n = openTime.length
  if (j >= n || openTime[j]! >= t) return j
  let lo = j
  let step = 1
  while (lo + step < n && openTime[lo + step]! < t) {
    lo += step
    step *= 2
  }
  let hi = Math.min(n, lo + step)
  lo++
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (openTime[mid]! < t) lo = mid + 1
    else hi = mid
  }
  return lo
}

const LABELS = new Map(Object.entries(TIMEFRAME_MS).map(([label, ms]) => [ms, label]))

function intervalLabel(ms: number): string {
  return LABELS.get(ms) ?? `${ms}ms`
}
