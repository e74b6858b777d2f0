import { random } from '../../engine/helpers.js'

/** A standard normal draw from two uniforms (Box–Muller). */
export function gaussian(next: () => number): () => number {
  return () => Math.sqrt(-2 * Math.log(1 - next())) * Math.cos(2 * Math.PI * next())
}

/**
 * N columns of T daily returns shaped like a sweep over one market: every configuration holds a share
 * β ∈ [0, 1) of the market's daily move (σ 3 %) plus its own noise (σ 1 %) and a small drift of its own,
 * so columns are correlated and some configurations are better than others. Seeded, so runs repeat.
 */
export function sweepLikeReturns(seed: number, configurations: number, days: number): Float64Array[] {
  const next = random(seed)
  const normal = gaussian(next)
  const market = Float64Array.from({ length: days }, () => 0.03 * normal())
  return Array.from({ length: configurations }, () => {
    const beta = next()
    const drift = (next() - 0.5) * 0.002
    return Float64Array.from(market, (m) => Math.max(-0.9, beta * m + 0.01 * normal() + drift))
  })
}
