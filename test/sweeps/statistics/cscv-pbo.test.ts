import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { cscvPbo, HISTOGRAM_BINS, type Pbo } from '../../../src/sweeps/statistics/cscv-pbo.js'
import { random } from '../../engine/helpers.js'
import { gaussian, sweepLikeReturns } from './helpers.js'

/** mean / std (ddof 1) of plain numbers, two passes; 0 when they do not vary (the documented convention). */
function plainSharpe(xs: number[]): number {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length
  const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (xs.length - 1)
  return variance === 0 ? 0 : mean / Math.sqrt(variance)
}

/**
 * CSCV written the slow, obvious way: every bitmask of S blocks with S/2 set, the in-sample and
 * out-of-sample rows concatenated, each configuration's Sharpe from its rows, ranks by sorting.
 */
function bruteForce(columns: Float64Array[], blocks: number) {
  const rows = columns[0]!.length
  const length = Math.floor(rows / blocks)
  const kept = columns.map((column) => Array.from(column).slice(rows - length * blocks))
  const pick = (column: number[], mask: number, inSample: boolean) =>
    Array.from({ length: blocks }, (_, b) => b).flatMap((b) => (((mask >> b) & 1) === 1) === inSample ? column.slice(b * length, (b + 1) * length) : [])
  const logits: number[] = []
  const winnerIn: number[] = []
  const winnerOut: number[] = []
  for (let mask = 0; mask < 1 << blocks; mask++) {
    let bits = 0
    for (let b = 0; b < blocks; b++) bits += (mask >> b) & 1
    if (bits !== blocks / 2) continue
    const inSharpe = kept.map((column) => plainSharpe(pick(column, mask, true)))
    const outSharpe = kept.map((column) => plainSharpe(pick(column, mask, false)))
    let best = 0
    for (let j = 1; j < inSharpe.length; j++) if (inSharpe[j]! > inSharpe[best]!) best = j
    const sorted = [...outSharpe].sort((a, b) => a - b)
    const rank = (sorted.indexOf(outSharpe[best]!) + 1 + sorted.lastIndexOf(outSharpe[best]!) + 1) / 2
    const omega = rank / (columns.length + 1)
    logits.push(Math.log(omega / (1 - omega)))
    winnerIn.push(inSharpe[best]!)
    winnerOut.push(outSharpe[best]!)
  }
  const n = logits.length
  const mx = winnerIn.reduce((a, b) => a + b, 0) / n
  const my = winnerOut.reduce((a, b) => a + b, 0) / n
  let sxy = 0
  let sxx = 0
  for (let c = 0; c < n; c++) {
    sxy += (winnerIn[c]! - mx) * (winnerOut[c]! - my)
    sxx += (winnerIn[c]! - mx) ** 2
  }
  const sorted = [...logits].sort((a, b) => a - b)
  return {
    combinations: n,
    pbo: logits.filter((l) => l <= 0).length / n,
    logits: sorted,
    mean: logits.reduce((a, b) => a + b, 0) / n,
    median: (sorted[n / 2 - 1]! + sorted[n / 2]!) / 2,
    probLoss: winnerOut.filter((s) => s < 0).length / n,
    slope: sxy / sxx,
    intercept: my - (sxy / sxx) * mx,
  }
}

const near = (got: number | null, expected: number, what: string, tolerance = 1e-10) =>
  assert.ok(got !== null && Math.abs(got - expected) <= tolerance * Math.max(1, Math.abs(expected)), `${what}: ${got}, expected ${expected}`)

function assertAgrees(columns: Float64Array[], blocks: number, tableBudget?: number): Pbo {
  const got = cscvPbo(columns, blocks, tableBudget)
  const want = bruteForce(columns, blocks)
  assert.equal(got.reason, undefined)
  assert.equal(got.combinations, want.combinations)
  assert.equal(got.value, want.pbo)
  assert.equal(got.prob_oos_loss, want.probLoss)
  near(got.logit_mean, want.mean, 'logit mean')
  near(got.logit_median, want.median, 'logit median')
  near(got.degradation_slope, want.slope, 'degradation slope')
  near(got.degradation_intercept, want.intercept, 'degradation intercept')
  assert.equal(got.dropped_rows, columns[0]!.length % blocks)
  // The histogram: counts of λ ≤ each edge, differenced; λ = 0 falls in the bin ending at 0.
  const { edges, counts } = got.histogram!
  assert.equal(edges.length, HISTOGRAM_BINS + 1)
  near(edges[0]!, -Math.log(columns.length), 'first edge', 1e-15)
  near(edges[HISTOGRAM_BINS]!, Math.log(columns.length), 'last edge', 1e-15)
  assert.equal(edges[HISTOGRAM_BINS / 2], 0)
  const atMost = (edge: number) => want.logits.filter((l) => l <= edge).length
  const expected = counts.map((_, k) => (k === HISTOGRAM_BINS - 1 ? want.combinations : atMost(edges[k + 1]!)) - (k === 0 ? 0 : atMost(edges[k]!)))
  assert.deepEqual(counts, expected)
  const left = counts.slice(0, HISTOGRAM_BINS / 2).reduce((a, b) => a + b, 0)
  assert.equal(left / got.combinations, got.value)
  return got
}

function gaussianMatrix(seed: number, configurations: number, rows: number, scale = 0.01): Float64Array[] {
  const normal = gaussian(random(seed))
  return Array.from({ length: configurations }, () => Float64Array.from({ length: rows }, () => scale * normal()))
}

describe('CSCV PBO against a brute-force computation', () => {
  it('random Gaussian matrices, several sizes, rows dropped from the front', () => {
    assertAgrees(gaussianMatrix(1, 9, 131, 0.02), 8)
    assertAgrees(gaussianMatrix(2, 4, 40), 4)
    assertAgrees(gaussianMatrix(3, 3, 9), 2)
  })

  it('sweep-like correlated matrices with real differences between configurations', () => {
    assertAgrees(sweepLikeReturns(7, 25, 307), 10)
    assertAgrees(sweepLikeReturns(8, 12, 500), 12)
  })

  it('ties: identical configurations and a flat one get averaged ranks, the first of equal winners is taken', () => {
    const base = gaussianMatrix(4, 4, 61)
    const columns = [base[0]!, base[1]!, Float64Array.from(base[0]!), base[2]!, Float64Array.from(base[1]!), new Float64Array(61), base[3]!]
    assertAgrees(columns, 6)
  })

  it('configurations equal on some blocks only: the first of exactly tied in-sample winners, ties averaged out of sample', () => {
    const base = gaussianMatrix(16, 4, 96)
    const laterBetter = Float64Array.from(base[0]!, (r, t) => (t >= 80 ? r + 0.02 : r)) // differs on the last block only
    const earlierWorse = Float64Array.from(base[1]!, (r, t) => (t < 16 ? r - 0.01 : r)) // differs on the first block only
    assertAgrees([base[0]!, laterBetter, base[1]!, base[2]!, earlierWorse, base[3]!], 6)
    assertAgrees([earlierWorse, base[1]!, laterBetter, base[0]!, base[2]!], 6)
  })

  it('configurations tabulated in chunks (a small table budget) give the same answer, ties across chunks included', () => {
    const base = gaussianMatrix(17, 5, 120)
    const columns = [...base, Float64Array.from(base[0]!), Float64Array.from(base[2]!, (r, t) => (t < 20 ? r + 0.01 : r)), new Float64Array(120)]
    // 4 × 2^3 doubles a configuration at S = 6: budgets of 1, 3 and 8 configurations a chunk.
    for (const budget of [32, 96, 256]) assertAgrees(columns, 6, budget)
  })

  it('a sweep without skill scores near 0.5, one with persistent differences near 0', () => {
    const skillless = cscvPbo(gaussianMatrix(5, 40, 1600), 16)
    assert.equal(skillless.combinations, 12_870)
    assert.ok(skillless.value! > 0.2 && skillless.value! < 0.8, `skill-less PBO ${skillless.value}`)
    const normal = gaussian(random(6))
    const skilled = Array.from({ length: 40 }, (_, j) => Float64Array.from({ length: 1600 }, () => 0.01 * normal() + j * 0.0001))
    const overfit = cscvPbo(skilled, 16)
    assert.ok(overfit.value! < 0.1, `skilled PBO ${overfit.value}`)
    assert.ok(overfit.degradation_slope !== null && overfit.logit_mean! > 1)
  })

  it('null with a reason, never NaN: odd or too few blocks, one configuration, too few rows', () => {
    const columns = gaussianMatrix(9, 5, 40)
    for (const [blocks, text] of [
      [7, /even number of blocks/],
      [0, /even number of blocks/],
      [2.5, /even number of blocks/],
      [26, /at most 24 blocks/],
    ] as const) {
      const pbo = cscvPbo(columns, blocks)
      assert.equal(pbo.value, null)
      assert.match(pbo.reason!, text)
    }
    assert.match(cscvPbo(columns.slice(0, 1), 4).reason!, /one configuration/)
    const short = cscvPbo(gaussianMatrix(10, 5, 15), 16)
    assert.equal(short.value, null)
    assert.match(short.reason!, /15 daily returns are too few for 16 blocks/)
  })

  it('every winner with the same in-sample Sharpe leaves the degradation line null with a reason, PBO still defined', () => {
    const flat = [new Float64Array(32), new Float64Array(32), new Float64Array(32)]
    const pbo = cscvPbo(flat, 4)
    assert.equal(pbo.value, 1) // all tie: rank 2 of 3 → ω = ½ → λ = 0 ≤ 0
    assert.equal(pbo.degradation_slope, null)
    assert.match(pbo.reason!, /same in-sample Sharpe/)
  })
})
