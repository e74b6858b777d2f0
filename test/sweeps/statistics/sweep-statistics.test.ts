import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { dailyReturns, moments, normalCdf, normalQuantile, type SweepStatistics, sweepStatistics } from '../../../src/sweeps/statistics/index.js'
import { sweepLikeReturns } from './helpers.js'

/** Every number in the result is finite (JSON would turn NaN into a silent null). */
function assertFinite(value: unknown, path = 'statistics'): void {
  if (typeof value === 'number') assert.ok(Number.isFinite(value), `${path} is ${value}`)
  else if (Array.isArray(value)) value.forEach((v, k) => assertFinite(v, `${path}[${k}]`))
  else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) assertFinite(v, `${path}.${k}`)
}

/** A null top-level statistic always has its reason. */
function assertExplained(statistics: SweepStatistics): void {
  for (const field of ['sharpe_variance', 'expected_max_sharpe', 'psr', 'dsr'] as const)
    if (statistics[field] === null) assert.ok(statistics.reasons[field], `${field} is null without a reason`)
  if (statistics.pbo.value === null) assert.ok(statistics.pbo.reason && statistics.reasons.pbo)
}

describe('sweepStatistics', () => {
  it('equals a plain computation of V, SR₀, PSR and DSR on a sweep-like matrix', () => {
    const returns = sweepLikeReturns(11, 30, 400)
    const plain = returns.map((column) => {
      const xs = Array.from(column)
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length
      const d = xs.map((x) => x - mean)
      const m2 = d.reduce((a, x) => a + x ** 2, 0) / xs.length
      const sharpe = mean / Math.sqrt((m2 * xs.length) / (xs.length - 1))
      return { sharpe, skew: d.reduce((a, x) => a + x ** 3, 0) / xs.length / m2 ** 1.5, kurt: d.reduce((a, x) => a + x ** 4, 0) / xs.length / m2 ** 2 }
    })
    let best = 0
    plain.forEach((p, j) => {
      if (p.sharpe > plain[best]!.sharpe) best = j
    })
    const sharpes = plain.map((p) => p.sharpe)
    const mean = sharpes.reduce((a, b) => a + b, 0) / sharpes.length
    const variance = sharpes.reduce((a, s) => a + (s - mean) ** 2, 0) / (sharpes.length - 1)
    const gamma = 0.5772156649015329
    const sr0 = Math.sqrt(variance) * ((1 - gamma) * normalQuantile(1 - 1 / 30) + gamma * normalQuantile(1 - 1 / (30 * Math.E)))
    const { sharpe, skew, kurt } = plain[best]!
    const spread = Math.sqrt(1 - skew * sharpe + ((kurt - 1) / 4) * sharpe * sharpe)

    const statistics = sweepStatistics(returns, best, 16)
    const near = (got: number | null, expected: number, what: string) =>
      assert.ok(got !== null && Math.abs(got - expected) <= 1e-12 * Math.max(1, Math.abs(expected)), `${what}: ${got}, expected ${expected}`)
    assert.equal(statistics.n_trials, 30)
    assert.equal(statistics.observations, 400)
    near(statistics.sharpe_variance, variance, 'V')
    near(statistics.expected_max_sharpe, sr0, 'SR₀')
    near(statistics.best_sharpe, sharpe, 'best Sharpe')
    near(statistics.best_skewness, skew, 'skewness')
    near(statistics.best_kurtosis, kurt, 'kurtosis')
    near(statistics.psr, normalCdf((sharpe * Math.sqrt(399)) / spread), 'PSR')
    near(statistics.dsr, normalCdf(((sharpe - sr0) * Math.sqrt(399)) / spread), 'DSR')
    assert.equal(statistics.pbo.combinations, 12_870)
    assert.equal(statistics.pbo.dropped_rows, 400 % 16)
    assert.deepEqual(statistics.reasons, {})
    assertFinite(statistics)
  })

  it('from equity curves through dailyReturns: a rising curve has a positive Sharpe, a flat one counts as 0', () => {
    const rising = Float64Array.from({ length: 200 }, (_, t) => 1000 * 1.001 ** t * (1 + 0.01 * Math.sin(t)))
    const flat = new Float64Array(200).fill(1000)
    const falling = Float64Array.from(rising, (v, t) => v * 0.998 ** t)
    const statistics = sweepStatistics([dailyReturns(rising), dailyReturns(flat), dailyReturns(falling)], 0, 4)
    const sharpes = [moments(dailyReturns(rising)).sharpe!, 0, moments(dailyReturns(falling)).sharpe!]
    const mean = (sharpes[0]! + sharpes[2]!) / 3
    const variance = sharpes.reduce((a, s) => a + (s - mean) ** 2, 0) / 2
    assert.ok(Math.abs(statistics.sharpe_variance! - variance) < 1e-15)
    assert.ok(statistics.psr! > 0.95 && statistics.pbo.value === 0)
    assertFinite(statistics)
  })

  it('one configuration: PSR stands, DSR, SR₀, V and PBO are null with reasons', () => {
    const statistics = sweepStatistics(sweepLikeReturns(12, 1, 300), 0, 16)
    assert.equal(statistics.n_trials, 1)
    assert.ok(statistics.psr !== null)
    assert.equal(statistics.dsr, null)
    assert.equal(statistics.expected_max_sharpe, null)
    assert.equal(statistics.sharpe_variance, null)
    assert.equal(statistics.pbo.value, null)
    assert.match(statistics.reasons.dsr!, /N = 1/)
    assert.match(statistics.reasons.pbo!, /one configuration/)
    assertExplained(statistics)
    assertFinite(statistics)
  })

  it('a best configuration that never moved: PSR and DSR null with a reason, the rest computed', () => {
    const returns = [new Float64Array(160), ...sweepLikeReturns(13, 4, 160)]
    const statistics = sweepStatistics(returns, 0, 8)
    assert.equal(statistics.psr, null)
    assert.equal(statistics.dsr, null)
    assert.match(statistics.reasons.psr!, /never vary/)
    assert.ok(statistics.pbo.value !== null && statistics.sharpe_variance! > 0)
    assertExplained(statistics)
    assertFinite(statistics)
  })

  it('too few days for the blocks: PBO null with a reason, the Sharpe statistics computed', () => {
    const statistics = sweepStatistics(sweepLikeReturns(14, 5, 10), 2, 16)
    assert.equal(statistics.pbo.value, null)
    assert.match(statistics.reasons.pbo!, /10 daily returns are too few for 16 blocks/)
    assert.ok(statistics.dsr !== null)
    assertExplained(statistics)
    assertFinite(statistics)
  })

  it('unusable input gives nulls and one reason, never a throw: no columns, uneven, non-finite, a bad best index, 1 day', () => {
    const good = sweepLikeReturns(15, 3, 64)
    const nan = Float64Array.from(good[1]!)
    nan[5] = Number.NaN
    const cases: [Float64Array[], number, RegExp][] = [
      [[], 0, /no configurations/],
      [[good[0]!, good[1]!.subarray(1)], 0, /configuration 1 has 63 daily returns, configuration 0 has 64/],
      [[good[0]!, nan], 0, /configuration 1 has a non-finite return on row 5/],
      [good, 3, /best index 3 is not one of the 3 configurations/],
      [good, -1, /best index -1/],
    ]
    for (const [returns, bestIndex, reason] of cases) {
      const statistics = sweepStatistics(returns, bestIndex, 8)
      assert.equal(statistics.dsr, null)
      assert.equal(statistics.pbo.value, null)
      assert.match(statistics.reasons.dsr!, reason)
      assertExplained(statistics)
      assertFinite(statistics)
    }
    const oneDay = sweepStatistics([new Float64Array([0.01]), new Float64Array([0.02])], 1, 2)
    assert.equal(oneDay.psr, null)
    assert.match(oneDay.reasons.psr!, /1 daily returns are too few/)
    assertExplained(oneDay)
    assertFinite(oneDay)
  })
})

describe('dailyReturns', () => {
  it('r_t = E_t / E_{t−1} − 1, T + 1 points to T returns', () => {
    assert.deepEqual(Array.from(dailyReturns(new Float64Array([100, 110, 99, 99]))), [110 / 100 - 1, 99 / 110 - 1, 0])
    assert.equal(dailyReturns(new Float64Array([5])).length, 0)
    assert.equal(dailyReturns(new Float64Array([])).length, 0)
  })

  it('a ruined account stays ruined: a fall through 0 is −1, then 0, never NaN or Infinity', () => {
    assert.deepEqual(Array.from(dailyReturns(new Float64Array([100, -5, 0, 20, Number.NaN, 10]))), [-1, 0, 0, 0, 0])
    assert.deepEqual(Array.from(dailyReturns(new Float64Array([100, 0, 50]))), [-1, 0])
  })
})

describe('moments', () => {
  it('population skewness and raw kurtosis, Sharpe with ddof 1: 1..5 gives 0, 1.7 and 3/√2.5', () => {
    const m = moments([1, 2, 3, 4, 5])
    assert.equal(m.mean, 3)
    assert.ok(Math.abs(m.skewness!) < 1e-15)
    assert.ok(Math.abs(m.kurtosis! - 1.7) < 1e-15)
    assert.ok(Math.abs(m.sharpe! - 3 / Math.sqrt(2.5)) < 1e-15)
  })

  it('undefined moments are null: no values, one value, no deviation', () => {
    assert.equal(moments([]).mean, null)
    assert.equal(moments([1]).std, null)
    const flat = moments([2, 2, 2])
    assert.equal(flat.std, 0)
    assert.equal(flat.sharpe, null)
    assert.equal(flat.kurtosis, null)
    // 0.001 fifty times: the mean rounds off the constant, leaving a deviation of rounding only.
    const constant = moments(new Float64Array(50).fill(0.001))
    assert.equal(constant.sharpe, null)
    assert.equal(constant.skewness, null)
  })
})
