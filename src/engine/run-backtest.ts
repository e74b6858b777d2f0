import { resolveParams, symbolsProblem, templateById } from '../templates/validate.js'
import type { Checked, ParamProblem, Template, TemplateContext } from '../templates/types.js'
import { computeMetrics } from './metrics.js'
import { barsInRange, fundingInRange } from './range.js'
import { type Simulation, simulateMulti, simulateSingle, type SimulationSetup } from './simulate.js'
import type { BacktestResult, BarSeries, FeeRates, FundingSeries, SymbolRules } from './types.js'

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
 * caller should never have built (mismatched arrays, unsorted bars), BacktestCancelledError on cancel.
 */
export function runBacktest(input: BacktestInput): BacktestResult {
  const { template, params } = templateAndParams(input)
  checkInput(input)

  const interval = input.bars[0]!.intervalMs
  const bars = input.bars.map((series) => barsInRange(series, input.start, input.end))
  // Funding events up to the end of the last possible bar: they settle at the open of the bar holding them.
  const funding = bars.map((_, s) => fundingInRange(input.funding?.[s] ?? EMPTY_FUNDING, input.start, input.end + interval))
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
  }
  const simulation: Simulation = template.multiSymbol
    ? simulateMulti(setup, template.create(context, params as never))
    : simulateSingle(setup, template.create(context, params as never))

  const { ledger, curve, lastClose, gaps } = simulation
  let finalEquity = ledger.cash
  for (let s = 0; s < bars.length; s++) finalEquity += ledger.unrealized(s, lastClose[s]!)
  return {
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
}
