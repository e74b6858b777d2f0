import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { EULER_GAMMA, expectedMaxSharpe, probabilisticSharpe } from '../../../src/sweeps/statistics/psr-dsr.js'

/*
 * The published examples as research/optimization.md §3.3 recomputed them (and esvhd/pypbo's tests
 * assert): the DSR paper's backtest (annualised SR 2.5 from 1,250 daily returns, 100 trials with
 * annualised Sharpe variance 0.5, skew −3, kurtosis 10) and the PSR paper's monthly SR 0.458 over 24 months.
 */
const close = (got: number | null, expected: number, tolerance: number, what: string) =>
  assert.ok(got !== null && Math.abs(got - expected) <= tolerance, `${what}: ${got}, expected ${expected}`)

describe('PSR and DSR', () => {
  const sr = 2.5 / Math.sqrt(250)
  const variance = 0.5 / 250

  it('E[max z] of 100 trials is 2.5306028932016846 (pypbo expected_max)', () => {
    close(expectedMaxSharpe(1, 100), 2.5306028932016846, 1e-12, 'E[max z](100)')
    close(expectedMaxSharpe(variance, 100), 0.044721 * 2.530603, 1e-6, 'SR₀ per day')
  })

  it('DSR of the DSR paper example is 0.9003968344 (to 10⁻⁹), its PSR(0) 0.999997', () => {
    const sr0 = expectedMaxSharpe(variance, 100)!
    close(probabilisticSharpe(sr, 1250, -3, 10, sr0), 0.90039683444939034, 1e-9, 'DSR')
    close(probabilisticSharpe(sr, 1250, -3, 10), 0.999997, 5e-7, 'PSR(0)')
  })

  it('DSR falls with the number of trials: 0.9999, 0.9939, 0.9462, 0.6399, 0.3389 for N = 2, 10, 50, 1,000, 10,000', () => {
    const expected: [number, number][] = [
      [2, 0.9999],
      [10, 0.9939],
      [50, 0.9462],
      [1000, 0.6399],
      [10000, 0.3389],
    ]
    for (const [trials, dsr] of expected) close(probabilisticSharpe(sr, 1250, -3, 10, expectedMaxSharpe(variance, trials)!), dsr, 5e-5, `DSR at N = ${trials}`)
    // Normal returns instead: 0.9428.
    close(probabilisticSharpe(sr, 1250, 0, 3, expectedMaxSharpe(variance, 100)!), 0.9428, 5e-5, 'DSR with normal returns')
  })

  it('PSR of the PSR paper example: 0.982 for normal returns, 0.913 with skew −2.448 and kurtosis 10.164', () => {
    close(probabilisticSharpe(0.458, 24, 0, 3), 0.9816749191, 1e-9, 'PSR normal')
    close(probabilisticSharpe(0.458, 24, -2.448, 10.164), 0.9133610839, 1e-9, 'PSR non-normal')
    close(probabilisticSharpe(1.585 / Math.sqrt(12), 24, -2.448, 10.164), 0.9132343069, 1e-9, 'PSR with pypbo’s SR 1.585/√12')
  })

  it('the degenerate inputs give null, never NaN', () => {
    assert.equal(expectedMaxSharpe(0.01, 1), null)
    assert.equal(expectedMaxSharpe(Number.NaN, 10), null)
    assert.equal(expectedMaxSharpe(0, 10), 0)
    assert.equal(probabilisticSharpe(0.1, 1, 0, 3), null)
    // Kurtosis on its bound 1 + skew² with a Sharpe where 1 − γ₃·SR + (γ₄ − 1)/4·SR² = 0: (1 − SR)² for γ₃ = 2, γ₄ = 5.
    assert.equal(probabilisticSharpe(1, 100, 2, 5), null)
    assert.ok(Math.abs(EULER_GAMMA - 0.5772156649015329) < 1e-16)
  })
})
