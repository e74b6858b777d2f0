/**
 * The backtest engine: pure and synchronous. Typed arrays of bars, funding events and symbol rules in,
 * a result out; no I/O, no clock, no randomness. The job layer (src/backtests/) fetches data, converts
 * decimal strings at its edges and calls runBacktest in a worker thread.
 */
export { BacktestParamsError, runBacktest, type BacktestInput } from './run-backtest.js'
export { BacktestCancelledError } from './simulate.js'
export { MissingMarkBars } from './exit-guard.js'
export { EXIT_REASONS } from './types.js'
export { ENGINE_SEMANTICS } from './semantics.js'
export { BINANCE_USDM_FEE_TIERS, DEFAULT_FEE_BPS, FEE_MODELS, type FeeModel, feeRates } from './fees.js'
export { computeMetrics, PERIODS_PER_YEAR } from './metrics.js'
export { DAY_MS } from './daily-curve.js'
export type {
  BacktestResult,
  BarGap,
  BarSeries,
  DetailBars,
  EquityPoint,
  ExitReason,
  ExitRules,
  FeeRates,
  FundingSeries,
  Metrics,
  OpenPosition,
  SymbolRules,
  Trade,
} from './types.js'
