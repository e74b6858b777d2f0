/**
 * The standard normal distribution, to double precision in both tails. The research measured the npm
 * candidates (docs research/optimization.md §4.4): simple-statistics is off by 10⁻³, @stdlib pulls in
 * 159 packages; ours is two short evaluations and a Halley refinement.
 */

const SQRT_2PI = Math.sqrt(2 * Math.PI)

/** Below this |x| the series for Φ − ½ keeps full precision (Q(1) = 0.159 loses half a digit at most). */
const SERIES_LIMIT = 1
const MAX_TERMS = 500

/** φ(x), the standard normal density. */
export function normalPdf(x: number): number {
  return Math.exp(-0.5 * x * x) / SQRT_2PI
}

/** Φ(x) − ½ = φ(x)·Σ x^(2k+1) / (1·3·…·(2k+1)): positive terms, no cancellation for |x| ≤ 1. */
function centralSeries(x: number): number {
  const x2 = x * x
  let term = x
  let sum = x
  for (let k = 1; k < MAX_TERMS; k++) {
    term *= x2 / (2 * k + 1)
    sum += term
    if (Math.abs(term) <= 1e-17 * Math.abs(sum)) break
  }
  return normalPdf(x) * sum
}

/**
 * Q(x) = 1 − Φ(x) for x ≥ 1 from the continued fraction of the Mills ratio,
 * Q(x) = φ(x) / (x + 1/(x + 2/(x + 3/(x + …)))), evaluated by the modified Lentz method; it keeps full
 * relative precision into the far tail, where 1 − Φ(x) would round to 0.
 */
function upperTailFraction(x: number): number {
  const tiny = 1e-300
  let f = x
  let c = x
  let d = 0
  for (let k = 1; k < MAX_TERMS * 10; k++) {
    d = x + k * d
    d = d === 0 ? 1 / tiny : 1 / d
    c = x + k / c
    if (c === 0) c = tiny
    const delta = c * d
    f *= delta
    if (Math.abs(delta - 1) < 1e-16) break
  }
  return normalPdf(x) / f
}

/** Q(x) = 1 − Φ(x) = Φ(−x), accurate relative to its own size for large x. */
export function normalUpperTail(x: number): number {
  if (Number.isNaN(x)) return Number.NaN
  if (x === Infinity) return 0
  if (x === -Infinity) return 1
  if (Math.abs(x) < SERIES_LIMIT) return 0.5 - centralSeries(x)
  return x > 0 ? upperTailFraction(x) : 1 - upperTailFraction(-x)
}

/** Φ(x), the standard normal cumulative distribution function. */
export function normalCdf(x: number): number {
  return normalUpperTail(-x)
}

/**
 * Φ⁻¹(p): −∞ at 0, +∞ at 1, NaN outside [0, 1]. A start from Abramowitz & Stegun 26.2.23 (error
 * < 4.5·10⁻⁴), then Halley steps on Q(x) = q in the tail of min(p, 1 − p) (1 − p is exact for p ≥ ½).
 */
export function normalQuantile(p: number): number {
  if (!(p >= 0 && p <= 1)) return Number.NaN
  if (p === 0) return -Infinity
  if (p === 1) return Infinity
  if (p === 0.5) return 0
  const q = p < 0.5 ? p : 1 - p
  const t = Math.sqrt(-2 * Math.log(q))
  let x = t - (2.515517 + 0.802853 * t + 0.010328 * t * t) / (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t)
  for (let step = 0; step < 8; step++) {
    const u = (normalUpperTail(x) - q) / normalPdf(x)
    const next = x + u / (1 - (x * u) / 2)
    const moved = Math.abs(next - x)
    x = next
    if (moved <= 1e-15 * Math.max(1, Math.abs(x))) break
  }
  return p < 0.5 ? -x : x
}
