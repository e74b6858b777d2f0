import { normalCdf, normalQuantile } from './normal.js'

/** Euler–Mascheroni γ. */
export const EULER_GAMMA = 0.5772156649015329

/**
 * The Probabilistic Sharpe Ratio against a benchmark (Bailey & López de Prado 2012):
 * Φ((SR − SR*)·√(T − 1) / √(1 − γ₃·SR + (γ₄ − 1)/4·SR²)), everything per observation, γ₄ raw.
 * null when the denominator vanishes (a two-valued series whose moments sit on the bound γ₄ = 1 + γ₃²)
 * or T < 2.
 */
export function probabilisticSharpe(sharpe: number, observations: number, skewness: number, kurtosis: number, benchmark = 0): number | null {
  if (observations < 2) return null
  const spread = 1 - skewness * sharpe + ((kurtosis - 1) / 4) * sharpe * sharpe
  if (!(spread > 0)) return null
  const value = normalCdf(((sharpe - benchmark) * Math.sqrt(observations - 1)) / Math.sqrt(spread))
  return Number.isFinite(value) ? value : null
}

/**
 * SR₀, the expected maximum Sharpe of `trials` skill-less trials whose Sharpe ratios vary by `variance`
 * (the False Strategy theorem): √V·((1 − γ)·Φ⁻¹(1 − 1/N) + γ·Φ⁻¹(1 − 1/(N·e))). null for N < 2
 * (Φ⁻¹(0) = −∞: one trial has no maximum to deflate by).
 */
export function expectedMaxSharpe(variance: number, trials: number): number | null {
  if (!(trials >= 2) || !(variance >= 0)) return null
  const z = (1 - EULER_GAMMA) * normalQuantile(1 - 1 / trials) + EULER_GAMMA * normalQuantile(1 - 1 / (trials * Math.E))
  return Math.sqrt(variance) * z
}
