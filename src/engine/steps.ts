/** Decimal places of a step or tick size (0.001 → 3, 0.1 → 1, 1 → 0), so results print without float noise. */
export function stepDecimals(step: number): number {
  if (!(step > 0)) throw new RangeError(`step must be > 0 (got ${step})`)
  for (let d = 0; d <= 12; d++) {
    const scaled = step * 10 ** d
    if (Math.abs(scaled - Math.round(scaled)) < 1e-9 * Math.max(1, scaled)) return d
  }
  return 12
}

/**
 * The largest multiple of `step` not above `x`. The 1e-9 slack absorbs float error in x / step
 * (0.3 / 0.1 is 2.9999999999999996), which would otherwise drop a whole step.
 */
export function floorToStep(x: number, step: number, decimals: number): number {
  if (!(x > 0)) return 0
  const k = Math.floor(x / step + 1e-9)
  return roundTo(k * step, decimals)
}

/** The smallest multiple of `step` not below `x`. */
export function ceilToStep(x: number, step: number, decimals: number): number {
  return roundTo(Math.ceil(x / step - 1e-9) * step, decimals)
}

/**
 * x rounded to `decimals` places. Dividing the rounded integer by 10^decimals is correctly rounded, so
 * this is the double nearest the decimal, the same number as Number(x.toFixed(decimals)), without the string
 * round trip (toFixed was ~10 % of the engine's time in bench/backtest.ts, one call per fill).
 */
export function roundTo(x: number, decimals: number): number {
  const scale = POWERS[decimals]!
  return Math.round(x * scale) / scale
}

const POWERS = Array.from({ length: 13 }, (_, d) => 10 ** d)
