/** The sample statistics of one return series, in per-observation units (issue 23 "Conventions"). */
export interface Moments {
  n: number
  mean: number | null
  /** Sample standard deviation (ddof 1); null below 2 observations. */
  std: number | null
  /** Population skewness m₃ / m₂^1.5; null without deviation. */
  skewness: number | null
  /** Population raw kurtosis m₄ / m₂² (3 for a normal); null without deviation. */
  kurtosis: number | null
  /** mean / std, no risk-free rate; null below 2 observations or without deviation. */
  sharpe: number | null
}

/**
 * Below this share of the mean square (about the mean, or the shift) variance is rounding, not deviation: a
 * column that never moved (a configuration that never traded) leaves ~10⁻¹⁶ of it after the subtraction.
 */
const ZERO_VARIANCE = 1e-12

/** Two passes (the mean first): the central sums keep full precision when the mean dwarfs the deviation. */
export function moments(xs: ArrayLike<number>): Moments {
  const n = xs.length
  if (n === 0) return { n, mean: null, std: null, skewness: null, kurtosis: null, sharpe: null }
  let sum = 0
  for (let t = 0; t < n; t++) sum += xs[t]!
  const mean = sum / n
  let s2 = 0
  let s3 = 0
  let s4 = 0
  for (let t = 0; t < n; t++) {
    const d = xs[t]! - mean
    const d2 = d * d
    s2 += d2
    s3 += d2 * d
    s4 += d2 * d2
  }
  if (n < 2) return { n, mean, std: null, skewness: null, kurtosis: null, sharpe: null }
  const std = Math.sqrt(s2 / (n - 1))
  const m2 = s2 / n
  // A constant column whose mean does not round to the constant leaves m₂ ≈ 10⁻³⁶: no deviation, not a Sharpe of 10¹⁶.
  if (!(m2 > ZERO_VARIANCE * (mean * mean + m2))) return { n, mean, std, skewness: null, kurtosis: null, sharpe: null }
  return { n, mean, std, skewness: s3 / n / m2 ** 1.5, kurtosis: s4 / n / (m2 * m2), sharpe: mean / std }
}

/** Sample variance (ddof 1) by two passes; null below 2 values. */
export function sampleVariance(xs: ArrayLike<number>): number | null {
  const n = xs.length
  if (n < 2) return null
  let sum = 0
  for (let k = 0; k < n; k++) sum += xs[k]!
  const mean = sum / n
  let s2 = 0
  for (let k = 0; k < n; k++) s2 += (xs[k]! - mean) ** 2
  return s2 / (n - 1)
}

/**
 * Sample variance (ddof 1) of n values from sums of their deviations from a shift c, Σ(x − c) and
 * Σ(x − c)²; 0 when what is left is rounding. With c near the mean the subtraction keeps full precision
 * (the shifted-data algorithm); the per-block sums of CSCV and the walk-forward's prefix sums use it.
 */
export function varianceFromShiftedSums(sum: number, sumSquares: number, n: number): number {
  const variance = (sumSquares - (sum * sum) / n) / (n - 1)
  return variance > ZERO_VARIANCE * (sumSquares / n) ? variance : 0
}

/**
 * Per-observation Sharpe ratio from shifted sums (see varianceFromShiftedSums); 0 where the values do
 * not vary, so a flat configuration ranks as neither winner nor loser (docs/decisions/sweeps.md, "Sweep statistics (issue 23)").
 */
export function sharpeFromShiftedSums(shift: number, sum: number, sumSquares: number, n: number): number {
  const variance = varianceFromShiftedSums(sum, sumSquares, n)
  return variance > 0 ? (shift + sum / n) / Math.sqrt(variance) : 0
}
