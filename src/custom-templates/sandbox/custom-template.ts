import type { BarSeries, FundingSeries, SymbolRules } from '../../engine/types.js'
import { MULTI_SYMBOL_MIN_CAPITAL, SINGLE_SYMBOL_MIN_CAPITAL } from '../../templates/params.js'
import type { MultiSymbolSignal, SingleSymbolSignal, Template, TemplateContext } from '../../templates/types.js'
import type { ModuleDescription } from './contract.js'
import { SANDBOX_LIMITS } from './limits.js'
import type { GuestContext, StrategyInstance } from './strategy-instance.js'
import { StrategyError } from './strategy-error.js'

/** Numbers per bar crossing into the sandbox: open_time, open, high, low, close, volume, quote_volume, trades (guest-driver.ts reads them in this order). */
const BAR_FIELDS = 8

export interface CustomTemplateSource {
  id: string
  version: number
  description: ModuleDescription
  timeframe: string
  /** The name its errors give the module (moduleFileName). */
  file?: string
}

/** How many symbols a module takes and the capital it needs: the built-in templates' minimums of its kind. */
export function customTemplateBounds(multiSymbol: boolean): { minSymbols: number; maxSymbols: number | null; minCapital: number } {
  return multiSymbol
    ? { minSymbols: 2, maxSymbols: null, minCapital: MULTI_SYMBOL_MIN_CAPITAL }
    : { minSymbols: 1, maxSymbols: 1, minCapital: SINGLE_SYMBOL_MIN_CAPITAL }
}

/**
 * A user's module as the engine's Template: the one interface built-in and custom strategies share, so
 * backtests, dry runs and live runs drive a module exactly as they drive sma_cross. Everything it calls
 * runs in `instance` (this thread is a sandbox thread under a watchdog). Targets of bars inside the
 * warm-up are dropped here, as the contract says, whatever the module answered.
 */
export function customTemplate(source: CustomTemplateSource, instance: StrategyInstance): Template {
  const { description } = source
  const base = {
    id: source.id,
    description: `custom template ${source.id} version ${source.version}`,
    schema: description.paramsSchema as never,
    refine: (params: Record<string, unknown>) => (description.hasValidate ? instance.validate(params) : undefined),
    warmupBars: (params: Record<string, unknown>) => checkedWarmup(instance.warmup(params)),
  }
  const guestContext = (context: TemplateContext, intervalMs: number): GuestContext => ({
    symbols: context.bars.map((series) => series.symbol),
    timeframe: source.timeframe,
    interval_ms: intervalMs,
    rules: Object.fromEntries(context.bars.map((series, s) => [series.symbol, guestRules(context.rules[s]!)])),
  })
  if (description.multiSymbol) {
    return {
      ...base,
      multiSymbol: true,
      minSymbols: customTemplateBounds(true).minSymbols,
      minCapital: customTemplateBounds(true).minCapital,
      create(context, params) {
        const intervalMs = context.bars[0]!.intervalMs
        const warmup = checkedWarmup(instance.warmup(params))
        instance.create(params, guestContext(context, intervalMs))
        return new CustomMultiSignal(instance, context.bars, context.funding, intervalMs, warmup)
      },
    }
  }
  return {
    ...base,
    multiSymbol: false,
    minCapital: customTemplateBounds(false).minCapital,
    create(context, params) {
      const intervalMs = context.bars[0]!.intervalMs
      const warmup = checkedWarmup(instance.warmup(params))
      instance.create(params, guestContext(context, intervalMs))
      return new CustomSignal(instance, context.bars[0]!, context.funding[0]!, warmup)
    },
  } as Template
}

/** A warmup() answer as a bar count, or STRATEGY_ERROR when it is not a whole number within the cap. */
export function checkedWarmup(bars: number): number {
  if (!(Number.isInteger(bars) && bars >= 0 && bars <= SANDBOX_LIMITS.maxWarmup)) {
    throw new StrategyError('STRATEGY_ERROR', `warmup returned ${bars}; it must be a whole number of bars from 0 to ${SANDBOX_LIMITS.maxWarmup}`)
  }
  return bars
}

function guestRules(rules: SymbolRules) {
  return { tick_size: rules.tickSize, step_size: rules.stepSize, min_qty: rules.minQty, min_notional: rules.minNotional }
}

/**
 * One symbol: bars go to the module in batches of SANDBOX_LIMITS.batchBars (one crossing each), with
 * the funding events that fall before each bar's close. Reads the series on every call, since a runner
 * grows it (and may swap its arrays) one bar at a time.
 *
 * `levels` is always there: whether a module states stop_price or take_profit_price is known only from
 * its answers. A batch in which it stated none crosses back as targets alone and writes no level, so a
 * module answering numbers pays nothing per bar here.
 */
class CustomSignal implements SingleSymbolSignal {
  readonly levels = new Float64Array(2)
  private next = 0
  private fundingNext = 0
  private readonly one = new Float64Array(1)

  constructor(
    private readonly instance: StrategyInstance,
    private readonly series: BarSeries,
    private readonly funding: FundingSeries,
    private readonly warmup: number,
  ) {}

  onBar(i: number): number {
    this.onBars(i, i + 1, this.one, this.levels)
    return this.one[0]!
  }

  onBars(from: number, to: number, targets: Float64Array, levels?: Float64Array): void {
    if (from !== this.next) throw new RangeError(`bars must reach a custom strategy in order: expected ${this.next}, got ${from}`)
    const { series, funding } = this
    for (let start = from; start < to; start += SANDBOX_LIMITS.batchBars) {
      const end = Math.min(to, start + SANDBOX_LIMITS.batchBars)
      const count = end - start
      const columns = new Float64Array(count * BAR_FIELDS)
      const { quoteVolume, trades } = series
      for (let k = 0; k < count; k++) {
        const i = start + k
        const o = k * BAR_FIELDS
        columns[o] = series.openTime[i]!
        columns[o + 1] = series.open[i]!
        columns[o + 2] = series.high[i]!
        columns[o + 3] = series.low[i]!
        columns[o + 4] = series.close[i]!
        columns[o + 5] = series.volume[i]!
        columns[o + 6] = quoteVolume ? quoteVolume[i]! : Number.NaN
        columns[o + 7] = trades ? trades[i]! : Number.NaN
      }
      const closeOfLast = series.openTime[end - 1]! + series.intervalMs
      const firstEvent = this.fundingNext
      let f = firstEvent
      while (f < funding.time.length && funding.time[f]! < closeOfLast) f++
      const events = new Float64Array((f - firstEvent) * 3)
      for (let k = firstEvent; k < f; k++) events.set([funding.time[k]!, funding.rate[k]!, funding.markPrice[k]!], (k - firstEvent) * 3)
      this.fundingNext = f
      const answered = atBar(this.instance, () => this.instance.bars(columns, count, events, f - firstEvent))
      const stated = answered.levels
      for (let k = 0; k < count; k++) targets[start - from + k] = start + k < this.warmup ? Number.NaN : answered.targets[k]!
      // Levels of warm-up bars are dropped with their targets; the engine NaN-filled `levels` (keep).
      if (stated !== undefined && levels !== undefined) {
        for (let k = Math.max(0, this.warmup - start); k < count; k++) {
          levels[2 * (start - from + k)] = stated[2 * k]!
          levels[2 * (start - from + k) + 1] = stated[2 * k + 1]!
        }
      }
    }
    this.next = to
  }
}

/** Many symbols: one crossing per time step, with each symbol's bar that closed then and its funding events; levels as CustomSignal's. */
class CustomMultiSignal implements MultiSymbolSignal {
  readonly levels: Float64Array
  private steps = 0
  private readonly fundingNext: Int32Array

  constructor(
    private readonly instance: StrategyInstance,
    private readonly bars: readonly BarSeries[],
    private readonly funding: readonly FundingSeries[],
    private readonly intervalMs: number,
    private readonly warmup: number,
  ) {
    this.fundingNext = new Int32Array(bars.length)
    this.levels = new Float64Array(2 * bars.length)
  }

  onStep(at: Int32Array, targets: Float64Array): boolean {
    const rows: number[] = []
    const events: number[] = []
    let count = 0
    let time = Number.NaN
    for (let s = 0; s < this.bars.length; s++) {
      const i = at[s]!
      if (i < 0) continue
      const series = this.bars[s]!
      time = series.openTime[i]!
      rows.push(s, series.openTime[i]!, series.open[i]!, series.high[i]!, series.low[i]!, series.close[i]!, series.volume[i]!)
      rows.push(series.quoteVolume ? series.quoteVolume[i]! : Number.NaN, series.trades ? series.trades[i]! : Number.NaN)
      count++
    }
    if (count === 0) return false
    for (let s = 0; s < this.bars.length; s++) {
      const funding = this.funding[s]!
      let f = this.fundingNext[s]!
      while (f < funding.time.length && funding.time[f]! < time + this.intervalMs) {
        events.push(s, funding.time[f]!, funding.rate[f]!, funding.markPrice[f]!)
        f++
      }
      this.fundingNext[s] = f
    }
    const answered = atBar(this.instance, () => this.instance.step(Float64Array.from(rows), count, Float64Array.from(events), events.length / 4))
    const step = this.steps++
    if (step < this.warmup) return false
    const stated = answered.levels
    if (stated !== undefined) this.levels.set(stated)
    let any = false
    for (let s = 0; s < targets.length; s++) {
      const target = answered.targets[s]!
      if (target === target) {
        targets[s] = target
        any = true
      }
    }
    return any
  }
}

/** Runs a call into the module; a failure names the bar it was given last. */
function atBar<T>(instance: StrategyInstance, call: () => T): T {
  try {
    return call()
  } catch (error) {
    if (!(error instanceof StrategyError)) throw error
    const time = instance.at()
    const at = time !== undefined && Number.isFinite(time) ? ` (bar ${new Date(time).toISOString()})` : ''
    throw new StrategyError(error.code, `${error.message}${at}`)
  }
}
