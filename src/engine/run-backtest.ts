import { resolveParams, symbolsProblem, templateById } from '../templates/validate.js'
import type { Checked, ParamProblem, Template, TemplateContext } from '../templates/types.js'
import { computeMetrics, exitReasonCounts } from './metrics.js'
import { barsInRange, fundingInRange } from './range.js'
import { type Simulation, simulateMulti, simulateSingle, type SimulationSetup } from './simulate.js'
import type { BacktestResult, BarSeries, DetailBars, ExitRules, FeeRates, FundingSeries, SymbolRules } from './types.js'

export interface BacktestInput {
  templateId: string
  /** The template itself when the registry does not hold it (a user's module, built in its sandbox thread). */
  template?: Template
  /** Raw params from the request; validated here (BacktestParamsError naming the field) and defaulted. */
  params: unknown
  /** One series per symbol, all of one interval; bars outside [start, end] are ignored. */
  bars: readonly BarSeries[]
  /** One per symbol, in the order of bars; omit or pass empty arrays for none. */
  funding?: readonly FundingSeries[]
  /** One per symbol, in the order of bars. */
  rules: readonly SymbolRules[]
  capital: number
  /** Integer 1..20. */
  leverage: number
  fees: FeeRates
  /** Inclusive bounds on bar open times, epoch ms. */
  start: number
  end: number
  /** Called about every 65,536 bars with the fraction done; return false to cancel (BacktestCancelledError). */
  onProgress?: (fraction: number) => boolean
  /** Protective exits as fractions of the entry price; a template's signal may also state levels of its own. */
  exits?: ExitRules
  /** Worsens every market fill (entries, target changes, protective exits) by this many basis points; default 0. */
  slippageBps?: number
  /**
   * One per symbol, in the order of bars (undefined for none): finer last-price bars, and mark-price bars for
   * trigger 'mark', that protective exits are examined on; bars outside the run's strategy bars are ignored.
   */
  detail?: readonly (DetailBars | undefined)[]
}

/** The template, params or symbols of a backtest do not suit each other: the problem names the request field at fault. */
export class BacktestParamsError extends Error {
  constructor(readonly problem: ParamProblem) {
    super(problem.message)
    this.name = 'BacktestParamsError'
  }
}

const EMPTY_FUNDING: FundingSeries = { time: new Float64Array(0), rate: new Float64Array(0), markPrice: new Float64Array(0) }

/**
 * Runs one backtest, synchronously and without I/O: the same input always gives the same result.
 * Throws BacktestParamsError for bad template params or symbol counts, RangeError for input the
 * caller should never have built (mismatched arrays, unsorted bars), BacktestCancelledError on cancel,
 * MissingMarkBars for exits with trigger mark and a symbol without mark-price bars in the range.
 */
export function runBacktest(input: BacktestInput): BacktestResult {
  const { template, params } = templateAndParams(input)
  checkInput(input)

  const interval = input.bars[0]!.intervalMs
  const bars = input.bars.map((series) => barsInRange(series, input.start, input.end))
  // Funding events up to the end of the last possible bar: they settle at the open of the bar holding them.
  const funding = bars.map((_, s) => fundingInRange(input.funding?.[s] ?? EMPTY_FUNDING, input.start, input.end + interval))
  // Detail bars up to the end of the last possible strategy bar.
  const detail = input.detail?.map((symbol) => symbol && detailInRange(symbol, input.start, input.end + interval - 1))
  const context: TemplateContext = { bars, funding, rules: input.rules }
  const setup: SimulationSetup = {
    bars,
    funding,
    rules: input.rules,
    capital: input.capital,
    leverage: input.leverage,
    fees: input.fees,
    start: input.start,
    end: input.end,
    onProgress: input.onProgress,
    exits: input.exits,
    slippageBps: input.slippageBps,
    detail,
  }
  const simulation: Simulation = template.multiSymbol
    ? simulateMulti(setup, template.create(context, params as never))
    : simulateSingle(setup, template.create(context, params as never))

  const { ledger, curve, lastClose, gaps, guard } = simulation
  let finalEquity = ledger.cash
  for (let s = 0; s < bars.length; s++) finalEquity += ledger.unrealized(s, lastClose[s]!)
  const result: BacktestResult = {
    trades: ledger.trades,
    openPositions: ledger.openPositions(lastClose),
    equityCurve: curve.points(),
    metrics: computeMetrics(curve.times, curve.values, ledger.trades),
    finalEquity,
    feesPaid: ledger.feesPaid,
    fundingPaid: ledger.fundingPaid,
    gaps,
    barsProcessed: bars.reduce((sum, series) => sum + series.openTime.length, 0),
    params,
  }
  // Runs without exits keep the result they always had: no new keys. A custom module's signal always
  // has levels (it may state them at any bar), so its run reports exits once it stated one.
  if (guard !== undefined && (input.exits !== undefined || guard.signalled)) {
    result.metrics.exitReasons = exitReasonCounts(ledger.trades)
    result.exitResolution = guard.resolution()
    const bySymbol = Object.fromEntries(bars.map((series, s) => [series.symbol, guard.ambiguous[s]!]))
    result.ambiguousExits = { total: guard.ambiguous.reduce((sum, n) => sum + n, 0), bySymbol }
  }
  return result
}

function detailInRange(detail: DetailBars, start: number, end: number): DetailBars {
  return {
    ...(detail.bars ? { bars: detail.bars.map((series) => barsInRange(series, start, end)) } : {}),
    ...(detail.mark ? { mark: detail.mark.map((series) => barsInRange(series, start, end)) } : {}),
  }
}

/** The input's template and resolved params, or BacktestParamsError naming the first problem (symbols too). */
function templateAndParams(input: BacktestInput): { template: Template; params: Record<string, unknown> } {
  const found: Checked<Template> = input.template ? { ok: true, value: input.template } : templateById(input.templateId)
  if (!found.ok) throw new BacktestParamsError(found.problem)
  const params = resolveParams(found.value, input.params)
  if (!params.ok) throw new BacktestParamsError(params.problem)
  const symbols = symbolsProblem(found.value, input.bars.map((b) => b.symbol))
  if (symbols) throw new BacktestParamsError(symbols)
  return { template: found.value, params: params.value }
}

function checkInput(input: BacktestInput): void {
  const fail = (message: string): never => {
    throw new RangeError(message)
  }
  if (input.bars.length === 0) fail('at least one bar series is needed')
  if (input.rules.length !== input.bars.length) fail('rules must have one entry per bar series')
  if (input.funding && input.funding.length !== input.bars.length) fail('funding must have one entry per bar series')
  if (!(Number.isFinite(input.capital) && input.capital > 0)) fail('capital must be a finite number > 0')
  if (!(Number.isInteger(input.leverage) && input.leverage >= 1 && input.leverage <= 20)) fail('leverage must be an integer from 1 to 20')
  if (!(input.fees.takerRate >= 0 && input.fees.takerRate < 1)) fail('the taker rate must be in [0, 1)')
  if (!(Number.isFinite(input.start) && Number.isFinite(input.end) && input.start < input.end)) fail('start must be before end')
  const interval = input.bars[0]!.intervalMs
  for (const series of input.bars) {
    if (series.intervalMs !== interval || !(interval > 0)) fail('all bar series need one positive interval')
    const n = series.openTime.length
    for (const column of [series.open, series.high, series.low, series.close, series.volume]) {
      if (column.length !== n) fail(`${series.symbol}: every bar column needs ${n} values`)
    }
  }
  for (const rules of input.rules) {
    if (!(rules.stepSize > 0 && rules.tickSize > 0 && rules.minQty >= 0 && rules.minNotional >= 0)) fail('symbol rules need stepSize, tickSize > 0')
    if (rules.brackets.length === 0) fail('symbol rules need at least one maintenance bracket')
  }
  for (const funding of input.funding ?? []) {
    if (funding.rate.length !== funding.time.length || funding.markPrice.length !== funding.time.length) {
      fail('funding time, rate and markPrice need equal lengths')
    }
  }
  checkExitInput(input, fail)
}

function checkExitInput(input: BacktestInput, fail: (message: string) => never): void {
  const { exits, slippageBps, detail } = input
  if (slippageBps !== undefined && !(Number.isFinite(slippageBps) && slippageBps >= 0)) fail('slippageBps must be a finite number ≥ 0')
  if (exits !== undefined) {
    if (exits.trigger !== 'last' && exits.trigger !== 'mark') fail("exits.trigger must be 'last' or 'mark'")
    for (const key of ['stopLoss', 'takeProfit', 'trailingStop', 'trailingActivation'] as const) {
      const value = exits[key]
      if (value !== undefined && !(Number.isFinite(value) && value > 0)) fail(`exits.${key} must be a finite number > 0`)
    }
    if (exits.trailingActivation !== undefined && exits.trailingStop === undefined) fail('exits.trailingActivation needs exits.trailingStop')
  }
  if (detail === undefined) return
  if (detail.length !== input.bars.length) fail('detail must have one entry per bar series')
  const interval = input.bars[0]!.intervalMs
  detail.forEach((symbol, s) => {
    for (const series of [...(symbol?.bars ?? []), ...(symbol?.mark ?? [])]) {
      if (series.symbol !== input.bars[s]!.symbol) fail(`detail ${s} holds ${series.symbol} bars, not ${input.bars[s]!.symbol}`)
      const d = series.intervalMs
      if (!(d > 0 && interval % d === 0)) fail(`${series.symbol}: detail bars of ${d} ms do not divide the ${interval} ms bars`)
      const { openTime } = series
      for (const column of [series.open, series.high, series.low]) if (column.length !== openTime.length) fail(`${series.symbol}: every detail column needs ${openTime.length} values`)
      // The exit walk counts a strategy bar covered from its first and last detail bars: that needs sorted
      // bars on the grid. (x % d on doubles made this pass 60 % of bench/exits.ts; a division and a floor do not.)
      let previous = -Infinity
      for (let j = 0; j < openTime.length; j++) {
        const t = openTime[j]!
        const k = t / d
        if (!(t > previous) || k !== Math.floor(k)) fail(`${series.symbol}: detail open times must ascend on the ${d} ms grid (bar ${j})`)
        previous = t
      }
    }
  })
}
