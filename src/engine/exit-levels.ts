import { ceilToStep, floorToStep, stepDecimals } from './steps.js'
import type { ExitRules, SymbolRules } from './types.js'

/** The per-symbol arrays a ledger snapshot carries for protective exits (Ledger.snapshot). */
export const EXIT_ARRAYS = [
  'exitStop',
  'exitTake',
  'exitActivation',
  'exitBest',
  'exitModuleStop',
  'exitModuleTake',
  'exitPendingStop',
  'exitPendingTake',
  'exitTarget',
  'exitLatched',
] as const

/**
 * The protective levels of each symbol's position, kept by the ledger beside the position they protect
 * (and saved with it, so a runner resumes with its levels, trailing extreme and latch). Every array is
 * NaN where nothing is set. The ledger tells this class of entries, resizes and closes; ExitGuard reads
 * and moves the trailing extreme, the module's levels and the latch.
 */
export class ExitLevels {
  /** Levels derived from the rules at the average entry price. */
  readonly exitStop: Float64Array
  readonly exitTake: Float64Array
  /** The price at which trailing starts (rules with trailingActivation), until it has. */
  readonly exitActivation: Float64Array
  /** The best price since entry or activation: trailing is on when this is set. */
  readonly exitBest: Float64Array
  /** The signal's levels (SingleSymbolSignal.levels) in force: they replace the derived ones of their side. */
  readonly exitModuleStop: Float64Array
  readonly exitModuleTake: Float64Array
  /** Levels stated at the last close, applied after the next open's fill (NaN keep, 0 remove, > 0 set). */
  readonly exitPendingStop: Float64Array
  readonly exitPendingTake: Float64Array
  /** The target of the position held (the last filled), for the latch. */
  readonly exitTarget: Float64Array
  /** 1 after a protective exit, until the strategy states a target other than exitTarget. */
  readonly exitLatched: Float64Array
  private readonly ticks: number[]
  private readonly tickDecimals: number[]

  constructor(
    symbolRules: readonly SymbolRules[],
    readonly rules: ExitRules | undefined,
  ) {
    const n = symbolRules.length
    const nan = () => new Float64Array(n).fill(Number.NaN)
    this.exitStop = nan()
    this.exitTake = nan()
    this.exitActivation = nan()
    this.exitBest = nan()
    this.exitModuleStop = nan()
    this.exitModuleTake = nan()
    this.exitPendingStop = nan()
    this.exitPendingTake = nan()
    this.exitTarget = nan()
    this.exitLatched = new Float64Array(n)
    this.ticks = symbolRules.map((r) => r.tickSize)
    this.tickDecimals = symbolRules.map((r) => stepDecimals(r.tickSize))
  }

  /** The largest tick multiple not above x: a long's stop, a short's target. */
  below(s: number, x: number): number {
    return floorToStep(x, this.ticks[s]!, this.tickDecimals[s]!)
  }

  /** The smallest tick multiple not below x: a short's stop, a long's target. */
  above(s: number, x: number): number {
    return ceilToStep(x, this.ticks[s]!, this.tickDecimals[s]!)
  }

  /** The stop-loss level in force for symbol s's position: the signal's, else the one derived from the rules; NaN for none. */
  stopLevel(s: number): number {
    const module = this.exitModuleStop[s]!
    return module === module ? module : this.exitStop[s]!
  }

  /** The take-profit level in force for symbol s's position, as stopLevel; NaN for none. */
  takeLevel(s: number): number {
    const module = this.exitModuleTake[s]!
    return module === module ? module : this.exitTake[s]!
  }

  /** The trailing stop of symbol s's position (side 1 long, −1 short) from its best price; NaN before trailing starts or without it. */
  trailLevel(s: number, side: number): number {
    const best = this.exitBest[s]!
    const callback = this.rules?.trailingStop
    if (best !== best || callback === undefined) return Number.NaN
    return side > 0 ? this.below(s, best * (1 - callback)) : this.above(s, best * (1 + callback))
  }

  /** The position of symbol s (side 1 long, −1 short) has average entry price `entry` after a fill; `fresh`: a new trip. */
  entered(s: number, side: number, entry: number, fresh: boolean): void {
    const rules = this.rules
    if (rules === undefined) return
    const { stopLoss, takeProfit, trailingStop, trailingActivation } = rules
    if (stopLoss !== undefined) this.exitStop[s] = side > 0 ? this.below(s, entry * (1 - stopLoss)) : this.above(s, entry * (1 + stopLoss))
    if (takeProfit !== undefined) this.exitTake[s] = side > 0 ? this.above(s, entry * (1 + takeProfit)) : this.below(s, entry * (1 - takeProfit))
    if (trailingStop === undefined) return
    // A resize keeps the trip's best price once trailing (flat() cleared it for a fresh trip).
    if (trailingActivation === undefined) {
      if (fresh) this.exitBest[s] = entry
    } else if (this.exitBest[s] !== this.exitBest[s]) {
      this.exitActivation[s] = side > 0 ? this.above(s, entry * (1 + trailingActivation)) : this.below(s, entry * (1 - trailingActivation))
    }
  }

  /**
   * Symbol s's open position (side, average entry price) is protected by this instance's rules from now on,
   * in place of whatever levels it had (a run resumed under changed exits): its derived levels afresh, as
   * for a new entry (trailing from the entry price, or awaiting activation); the signal's levels and the
   * latch stay.
   */
  renew(s: number, side: number, entry: number): void {
    this.exitStop[s] = Number.NaN
    this.exitTake[s] = Number.NaN
    this.exitActivation[s] = Number.NaN
    this.exitBest[s] = Number.NaN
    this.entered(s, side, entry, true)
  }

  /** After a protective exit of symbol s: flat until the strategy states a target other than the one in force (ExitGuard.admits). */
  latch(s: number): void {
    this.exitLatched[s] = 1
  }

  /** Symbol s's position closed: its levels go with it (the latch and the target in force stay). */
  flat(s: number): void {
    this.exitStop[s] = Number.NaN
    this.exitTake[s] = Number.NaN
    this.exitActivation[s] = Number.NaN
    this.exitBest[s] = Number.NaN
    this.exitModuleStop[s] = Number.NaN
    this.exitModuleTake[s] = Number.NaN
  }
}
