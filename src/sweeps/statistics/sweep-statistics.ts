import { cscvPbo, type Pbo } from './cscv-pbo.js'
import { moments, sampleVariance } from './moments.js'
import { expectedMaxSharpe, probabilisticSharpe } from './psr-dsr.js'

/**
 * A sweep's overfitting statistics (issue 23 "result.statistics"). Sharpe ratios, their variance and SR₀
 * are per observation (daily). A statistic that cannot be computed is null and `reasons` says why under
 * the field's name: never NaN, never a throw.
 */
export interface SweepStatistics {
  /** N, the configurations the returns matrix holds. */
  n_trials: number
  /** V, the variance (ddof 1) of the N per-observation Sharpe ratios. */
  sharpe_variance: number | null
  /** SR₀, the expected maximum Sharpe of N skill-less trials with that variance. */
  expected_max_sharpe: number | null
  /** The best configuration's PSR against 0. */
  psr: number | null
  /** The best configuration's PSR against SR₀. */
  dsr: number | null
  pbo: Pbo
  /** T, the daily returns per configuration. */
  observations: number
  /** The best configuration's per-observation Sharpe, population skewness and raw kurtosis. */
  best_sharpe: number | null
  best_skewness: number | null
  best_kurtosis: number | null
  /** Why a null field is null, by field name (empty when every statistic is defined). */
  reasons: Record<string, string>
}

/** The first problem that makes the matrix unusable, or null. */
function matrixProblem(returns: readonly Float64Array[], bestIndex: number): string | null {
  if (returns.length === 0) return 'the sweep has no configurations'
  const rows = returns[0]!.length
  for (let j = 0; j < returns.length; j++) {
    const column = returns[j]!
    if (column.length !== rows) return `configuration ${j} has ${column.length} daily returns, configuration 0 has ${rows}`
    for (let t = 0; t < rows; t++) if (!Number.isFinite(column[t]!)) return `configuration ${j} has a non-finite return on row ${t}`
  }
  if (!Number.isInteger(bestIndex) || bestIndex < 0 || bestIndex >= returns.length) return `best index ${bestIndex} is not one of the ${returns.length} configurations`
  return null
}

/**
 * n_trials, V, SR₀, PSR and DSR of the best configuration, and PBO by CSCV over `blocks` blocks, from the
 * T × N daily returns (one Float64Array of T per configuration, in run order).
 */
export function sweepStatistics(returns: Float64Array[], bestIndex: number, blocks: number): SweepStatistics {
  const n = returns.length
  const observations = returns[0]?.length ?? 0
  const reasons: Record<string, string> = {}
  const problem = matrixProblem(returns, bestIndex)
  if (problem) {
    for (const field of ['sharpe_variance', 'expected_max_sharpe', 'psr', 'dsr', 'pbo']) reasons[field] = problem
    return {
      n_trials: n,
      sharpe_variance: null,
      expected_max_sharpe: null,
      psr: null,
      dsr: null,
      pbo: { value: null, combinations: 0, logit_mean: null, logit_median: null, histogram: null, prob_oos_loss: null, degradation_slope: null, degradation_intercept: null, blocks, block_length: 0, dropped_rows: 0, reason: problem },
      observations,
      best_sharpe: null,
      best_skewness: null,
      best_kurtosis: null,
      reasons,
    }
  }

  // A configuration whose returns never vary (it never traded) has no Sharpe; it counts as 0 among the trials.
  const sharpes = new Float64Array(n)
  for (let j = 0; j < n; j++) sharpes[j] = moments(returns[j]!).sharpe ?? 0
  const variance = sampleVariance(sharpes)
  if (variance === null) reasons.sharpe_variance = 'the variance of the Sharpe ratios needs at least 2 configurations'
  const sr0 = variance === null ? null : expectedMaxSharpe(variance, n)
  if (sr0 === null) reasons.expected_max_sharpe = 'one configuration has no expected maximum among trials (Φ⁻¹(1 − 1/N) = −∞ at N = 1)'

  const best = moments(returns[bestIndex]!)
  let psr: number | null = null
  let dsr: number | null = null
  if (best.sharpe === null || best.skewness === null || best.kurtosis === null) {
    const why = observations < 2 ? `${observations} daily returns are too few for a Sharpe ratio` : "the best configuration's daily returns never vary: its Sharpe ratio is undefined"
    reasons.psr = why
    reasons.dsr = why
  } else {
    psr = probabilisticSharpe(best.sharpe, observations, best.skewness, best.kurtosis)
    if (psr === null) reasons.psr = "the best configuration's returns take two values only: the Sharpe ratio's standard error is 0"
    if (sr0 === null) reasons.dsr = reasons.expected_max_sharpe!
    else {
      dsr = probabilisticSharpe(best.sharpe, observations, best.skewness, best.kurtosis, sr0)
      if (dsr === null) reasons.dsr = reasons.psr ?? 'the Sharpe ratio’s standard error is 0'
    }
  }

  const pbo = cscvPbo(returns, blocks)
  if (pbo.reason) reasons[pbo.value === null ? 'pbo' : 'pbo.degradation_slope'] = pbo.reason
  return {
    n_trials: n,
    sharpe_variance: variance,
    expected_max_sharpe: sr0,
    psr,
    dsr,
    pbo,
    observations,
    best_sharpe: best.sharpe,
    best_skewness: best.skewness,
    best_kurtosis: best.kurtosis,
    reasons,
  }
}
