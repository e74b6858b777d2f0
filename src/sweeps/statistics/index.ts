/**
 * PLACEHOLDER until branch sweep-stats lands: the interface the sweep service codes against, every
 * function throwing. The lead replaces this file with the real module at merge; tests that need real
 * statistics check STATISTICS_PLACEHOLDER and assert the sweep's result only once it is gone.
 */
export const STATISTICS_PLACEHOLDER = true

export interface PboStatistics {
  value: number
  combinations: number
  logit_mean: number
  logit_median: number
  histogram: unknown
  prob_oos_loss: number
  degradation_slope: number
  degradation_intercept: number
}

export interface SweepStatistics {
  n_trials: number
  sharpe_variance: number
  expected_max_sharpe: number
  psr: number
  dsr: number
  pbo: PboStatistics
}

/** Assumed shape (to reconcile at merge): the T × N daily returns, the days they end on, and the windows in days. */
export interface WalkForwardInput {
  returns: Float64Array[]
  /** Epoch ms of the day each return ends on, length T. */
  days: number[]
  in_sample_days: number
  out_of_sample_days: number
  anchored: boolean
  capital: number
}

export interface WalkForwardResult {
  windows: unknown[]
  curve: unknown[]
  efficiency: number | null
}

const notMerged = (): never => {
  throw new Error('sweep statistics: not merged yet (branch sweep-stats)')
}

/** r_t = E_t/E_{t-1} - 1. */
export function dailyReturns(equity: Float64Array): Float64Array {
  return notMerged() ?? equity
}

export function sweepStatistics(returns: Float64Array[], bestIndex: number, blocks: number): SweepStatistics {
  return notMerged() ?? { returns, bestIndex, blocks }
}

export function walkForward(input: WalkForwardInput): WalkForwardResult {
  return notMerged() ?? input
}
