import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { normalCdf, normalQuantile } from '../../../src/sweeps/statistics/normal.js'

/** Φ(x) from mpmath 1.3.0 `ncdf` at 40 digits, rounded to doubles. */
const CDF: [number, number][] = [
  [-37, 5.725571222524577e-300],
  [-20, 2.7536241186062337e-89],
  [-8, 6.220960574271784e-16],
  [-5, 2.866515718791939e-7],
  [-3, 0.0013498980316300946],
  [-1.96, 0.024997895148220435],
  [-1, 0.15865525393145705],
  [-0.5, 0.3085375387259869],
  [0, 0.5],
  [0.25, 0.5987063256829237],
  [1, 0.8413447460685429],
  [1.5, 0.9331927987311419],
  [2.5, 0.9937903346742238],
  [4, 0.9999683287581669],
]

/** Φ⁻¹(p) from mpmath (√2·erfinv(2p − 1) at 40 digits). */
const QUANTILE: [number, number][] = [
  [1e-12, -7.034483825301132],
  [1e-6, -4.753424308822899],
  [0.001, -3.0902323061678136],
  [0.025, -1.9599639845400543],
  [0.3, -0.5244005127080408],
  [0.7, 0.5244005127080407],
  [0.99, 2.3263478740408408],
  [0.999999, 4.753424308817087],
]

describe('normal distribution', () => {
  it('Φ matches 40-digit values to 10⁻¹⁴ relative, deep tails included', () => {
    for (const [x, expected] of CDF) {
      const got = normalCdf(x)
      assert.ok(Math.abs(got - expected) <= 1e-14 * expected, `Φ(${x}) = ${got}, expected ${expected}`)
    }
  })

  it('Φ⁻¹ matches 40-digit values to the precision p allows', () => {
    for (const [p, expected] of QUANTILE) {
      const got = normalQuantile(p)
      // Near 1, p itself carries only ~10⁻¹⁶ absolute precision: dx = 10⁻¹⁶ / φ(x).
      const allowed = 1e-14 * Math.max(1, Math.abs(expected)) + 2.3e-16 / Math.exp(-0.5 * expected * expected)
      assert.ok(Math.abs(got - expected) <= allowed, `Φ⁻¹(${p}) = ${got}, expected ${expected}`)
    }
    assert.equal(normalQuantile(0.5), 0)
  })

  it('Φ⁻¹ inverts Φ across the range, including 10⁻³⁰⁰', () => {
    for (const p of [1e-300, 1e-100, 1e-20, 1e-9, 0.01, 0.2, 0.45, 0.5001, 0.8, 0.97]) {
      const x = normalQuantile(p)
      // Φ's relative slope is |x|, so x's rounding shows |x|-fold in the tail (|x| = 37 at 10⁻³⁰⁰).
      assert.ok(Math.abs(normalCdf(x) - p) <= 1e-14 * Math.max(1, x * x) * p, `Φ(Φ⁻¹(${p})) = ${normalCdf(x)}`)
      assert.ok(Math.abs(normalQuantile(1 - p) + x) <= 1e-9 * Math.max(1, Math.abs(x)) || p < 1e-15, `symmetry at ${p}`)
    }
  })

  it('the ends and outside: ±∞ at 0 and 1, NaN beyond, 0 and 1 for infinite x', () => {
    assert.equal(normalQuantile(0), -Infinity)
    assert.equal(normalQuantile(1), Infinity)
    assert.ok(Number.isNaN(normalQuantile(-0.1)))
    assert.ok(Number.isNaN(normalQuantile(1.5)))
    assert.ok(Number.isNaN(normalQuantile(Number.NaN)))
    assert.equal(normalCdf(-Infinity), 0)
    assert.equal(normalCdf(Infinity), 1)
    assert.equal(normalCdf(-40), 0) // 3.7·10⁻³⁵⁰ underflows to 0, not NaN
    assert.equal(normalCdf(40), 1)
  })
})
