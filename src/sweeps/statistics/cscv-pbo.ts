import { sharpeFromShiftedSums } from './moments.js'

/** Bins of the logit histogram: equal widths over [−ln N, ln N], the range every λ falls in. */
export const HISTOGRAM_BINS = 20

/** Histogram of the logits; bins are (edges[k], edges[k + 1]], the first closed, so λ = 0 counts left of 0. */
export interface LogitHistogram {
  edges: number[]
  counts: number[]
}

export interface Pbo {
  /** Share of combinations with λ ≤ 0; null with `reason` when CSCV cannot run. */
  value: number | null
  combinations: number
  logit_mean: number | null
  logit_median: number | null
  histogram: LogitHistogram | null
  /** Share of combinations whose in-sample winner has an out-of-sample Sharpe < 0. */
  prob_oos_loss: number | null
  /** Least squares of the winner's out-of-sample on its in-sample Sharpe (per observation) over combinations. */
  degradation_slope: number | null
  degradation_intercept: number | null
  blocks: number
  /** Rows per block, floor(T / S). */
  block_length: number
  /** The first T mod S rows, left out. */
  dropped_rows: number
  reason?: string
}

/** C(n, k) exactly for the small n CSCV uses. */
export function binomial(n: number, k: number): number {
  let c = 1
  for (let j = 1; j <= k; j++) c = (c * (n - k + j)) / j
  return Math.round(c)
}

function unavailable(blocks: number, reason: string, blockLength = 0, dropped = 0): Pbo {
  return {
    value: null,
    combinations: 0,
    logit_mean: null,
    logit_median: null,
    histogram: null,
    prob_oos_loss: null,
    degradation_slope: null,
    degradation_intercept: null,
    blocks,
    block_length: blockLength,
    dropped_rows: dropped,
    reason,
  }
}

/**
 * Probability of Backtest Overfitting by combinatorially symmetric cross-validation (Bailey, Borwein,
 * López de Prado & Zhu 2017) with the conventions of issue 23: the first T mod S rows dropped, S
 * contiguous equal blocks, every choice of S/2 in-sample blocks, the first argmax of in-sample Sharpe,
 * its out-of-sample rank among all N (ties averaged), ω = rank/(N + 1), λ = ln(ω/(1 − ω)).
 *
 * Cost: per-block Σ(r − c) and Σ(r − c)² per configuration (c its mean) are summed once, so a
 * combination costs O(S·N) additions instead of O(T·N): 12,870 × 16 × 1,000 for the bench.
 * `columns` must be non-empty, equally long and finite (sweepStatistics checks).
 */
export function cscvPbo(columns: readonly Float64Array[], blocks: number): Pbo {
  const n = columns.length
  const rows = columns[0]?.length ?? 0
  if (!Number.isInteger(blocks) || blocks < 2 || blocks % 2 !== 0) return unavailable(blocks, `CSCV needs an even number of blocks of at least 2 (got ${blocks})`)
  if (n < 2) return unavailable(blocks, 'PBO compares configurations: a sweep of one configuration has none to compare')
  const blockLength = Math.floor(rows / blocks)
  const dropped = rows - blockLength * blocks
  const half = blocks / 2
  const halfRows = half * blockLength
  if (halfRows < 2) return unavailable(blocks, `${rows} daily returns are too few for ${blocks} blocks: each half needs at least 2 days`, blockLength, dropped)

  // Block sums laid out per configuration, [config × S + block], so each configuration's S sums sit together.
  const shift = new Float64Array(n)
  const blockSum = new Float64Array(n * blocks)
  const blockSquares = new Float64Array(n * blocks)
  for (let j = 0; j < n; j++) {
    const column = columns[j]!
    let total = 0
    for (let t = dropped; t < rows; t++) total += column[t]!
    const c = total / (rows - dropped)
    shift[j] = c
    for (let b = 0; b < blocks; b++) {
      let s = 0
      let q = 0
      const from = dropped + b * blockLength
      for (let t = from; t < from + blockLength; t++) {
        const d = column[t]! - c
        s += d
        q += d * d
      }
      blockSum[j * blocks + b] = s
      blockSquares[j * blocks + b] = q
    }
  }

  const combinations = binomial(blocks, half)
  const logits = new Float64Array(combinations)
  const winnerIn = new Float64Array(combinations)
  const winnerOut = new Float64Array(combinations)
  const outSharpe = new Float64Array(n)
  const chosen = new Int32Array(half) // the in-sample blocks, ascending
  const other = new Int32Array(half)
  for (let k = 0; k < half; k++) chosen[k] = k
  let overfit = 0
  let losses = 0
  for (let c = 0; c < combinations; c++) {
    // The out-of-sample blocks: the complement of `chosen`.
    for (let b = 0, i = 0, o = 0; b < blocks; b++) {
      if (i < half && chosen[i] === b) i++
      else other[o++] = b
    }
    let best = 0
    let bestIn = -Infinity
    for (let j = 0; j < n; j++) {
      const base = j * blocks
      let si = 0
      let qi = 0
      let so = 0
      let qo = 0
      for (let k = 0; k < half; k++) {
        const bi = base + chosen[k]!
        const bo = base + other[k]!
        si += blockSum[bi]!
        qi += blockSquares[bi]!
        so += blockSum[bo]!
        qo += blockSquares[bo]!
      }
      const inSharpe = sharpeFromShiftedSums(shift[j]!, si, qi, halfRows)
      if (inSharpe > bestIn) {
        bestIn = inSharpe
        best = j
      }
      outSharpe[j] = sharpeFromShiftedSums(shift[j]!, so, qo, halfRows)
    }
    const won = outSharpe[best]!
    let below = 0
    let equal = 0
    for (let j = 0; j < n; j++) {
      const s = outSharpe[j]!
      if (s < won) below++
      else if (s === won) equal++
    }
    const rank = below + (equal + 1) / 2 // the average of ranks below+1 … below+equal
    const omega = rank / (n + 1)
    const logit = Math.log(omega / (1 - omega))
    logits[c] = logit
    winnerIn[c] = bestIn
    winnerOut[c] = won
    if (logit <= 0) overfit++
    if (won < 0) losses++
    nextCombination(chosen, blocks)
  }

  const regression = leastSquares(winnerIn, winnerOut)
  const result: Pbo = {
    value: overfit / combinations,
    combinations,
    logit_mean: mean(logits),
    logit_median: median(logits),
    histogram: logitHistogram(logits, n),
    prob_oos_loss: losses / combinations,
    degradation_slope: regression?.slope ?? null,
    degradation_intercept: regression?.intercept ?? null,
    blocks,
    block_length: blockLength,
    dropped_rows: dropped,
  }
  if (!regression) result.reason = 'every combination picked a winner with the same in-sample Sharpe: no degradation line to fit'
  return result
}

/** Advances an ascending k-subset of 0..n−1 to the next in lexicographic order (the last wraps, unused). */
function nextCombination(chosen: Int32Array, n: number): void {
  const k = chosen.length
  let i = k - 1
  while (i >= 0 && chosen[i] === n - k + i) i--
  if (i < 0) return
  chosen[i]!++
  for (let j = i + 1; j < k; j++) chosen[j] = chosen[j - 1]! + 1
}

function mean(xs: Float64Array): number {
  let sum = 0
  for (const x of xs) sum += x
  return sum / xs.length
}

function median(xs: Float64Array): number {
  const sorted = Float64Array.from(xs).sort()
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** y = intercept + slope·x by least squares; null when x does not vary. */
export function leastSquares(x: Float64Array, y: Float64Array): { slope: number; intercept: number } | null {
  const mx = mean(x)
  const my = mean(y)
  let sxx = 0
  let sxy = 0
  for (let k = 0; k < x.length; k++) {
    const dx = x[k]! - mx
    sxx += dx * dx
    sxy += dx * (y[k]! - my)
  }
  if (!(sxx > 0)) return null
  const slope = sxy / sxx
  return { slope, intercept: my - slope * mx }
}

/** HISTOGRAM_BINS equal bins over [−ln N, ln N] with 0 an edge; λ at the rounded extremes clamps in. */
export function logitHistogram(logits: Float64Array, configurations: number): LogitHistogram {
  const reach = Math.log(configurations)
  const halfBins = HISTOGRAM_BINS / 2
  const edges = Array.from({ length: HISTOGRAM_BINS + 1 }, (_, k) => (reach * (k - halfBins)) / halfBins)
  const counts = new Array<number>(HISTOGRAM_BINS).fill(0)
  for (const logit of logits) {
    let bin = 0
    while (bin < HISTOGRAM_BINS - 1 && logit > edges[bin + 1]!) bin++
    counts[bin]!++
  }
  return { edges, counts }
}
