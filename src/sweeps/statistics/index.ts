/** Sweep statistics (issue 23): pure functions of the T × N daily returns matrix; no I/O. */

export { binomial, type LogitHistogram, type Pbo, cscvPbo, HISTOGRAM_BINS } from './cscv-pbo.js'
export { dailyReturns } from './daily-returns.js'
export { type Moments, moments } from './moments.js'
export { normalCdf, normalQuantile } from './normal.js'
export { EULER_GAMMA, expectedMaxSharpe, probabilisticSharpe } from './psr-dsr.js'
export type { SliceMetricName, SliceMetrics } from './slice-metrics.js'
export { type SweepStatistics, sweepStatistics } from './sweep-statistics.js'
export {
  type DaySpan,
  WALK_FORWARD_OBJECTIVES,
  type WalkForwardInput,
  type WalkForwardResult,
  type WalkForwardWindow,
  walkForward,
} from './walk-forward.js'
