import os from 'node:os'
import { moments, sweepStatistics, walkForward } from '../src/sweeps/statistics/index.js'
import { sweepLikeReturns } from '../test/sweeps/statistics/helpers.js'
import { atMost } from './support/ceiling.js'
import { log } from './support/log.js'

/** Issue 23: the statistics for N = 1,000, T ≈ 2,000 days, S = 16 (12,870 combinations) in ≤ 2 s. */
const GOAL_MS = 2000
const CONFIGURATIONS = 1000
const DAYS = 2000
const BLOCKS = 16
const RUNS = 5
const DAY_MS = 86_400_000
/** The sweep limit (10,000 configurations), timed once: what a largest sweep's statistics cost. */
const LARGEST = 10_000

/** The configuration with the highest Sharpe, as a sweep ranked by sharpe would pass it. */
function bestBySharpe(returns: Float64Array[]): number {
  let best = 0
  let bestSharpe = -Infinity
  returns.forEach((column, j) => {
    const sharpe = moments(column).sharpe ?? 0
    if (sharpe > bestSharpe) {
      bestSharpe = sharpe
      best = j
    }
  })
  return best
}

function timed<T>(work: () => T): { value: T; ms: number; cpuMs: number } {
  const cpu = process.cpuUsage()
  const started = performance.now()
  const value = work()
  const ms = performance.now() - started
  const used = process.cpuUsage(cpu)
  return { value, ms, cpuMs: (used.user + used.system) / 1000 }
}

const round = (x: number) => Math.round(x * 10) / 10
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/**
 * The statistics part of `npm run bench -- sweep`: sweepStatistics (moments of every configuration, V,
 * SR₀, PSR, DSR and the full CSCV) on a seeded sweep-like matrix, on this thread, RUNS times after one
 * warm-up; then one rolling and one anchored walk-forward (365 in-sample, 30 out-of-sample days) over it,
 * and one run at the sweep limit of 10,000 configurations (best of each by Sharpe).
 * Returns the fields the sweep suite merges into its report, and the failures that void them.
 */
export function statisticsBench(): { report: Record<string, unknown>; failures: string[] } {
  log(`statistics: generating ${CONFIGURATIONS} × ${DAYS} daily returns`)
  const returns = sweepLikeReturns(23, CONFIGURATIONS, DAYS)
  const days = Array.from({ length: DAYS }, (_, t) => Date.UTC(2020, 0, 2) + t * DAY_MS)
  const best = bestBySharpe(returns)
  sweepStatistics(returns, best, BLOCKS)
  const runs = Array.from({ length: RUNS }, () => timed(() => sweepStatistics(returns, best, BLOCKS)))
  const statistics = runs[0]!.value
  const ms = median(runs.map((run) => run.ms))
  log(`statistics: median ${round(ms)} ms over ${RUNS} runs`)
  const rolling = timed(() => walkForward({ returns, days, in_sample_days: 365, out_of_sample_days: 30, anchored: false, objective: 'sharpe' }))
  const anchored = timed(() => walkForward({ returns, days, in_sample_days: 365, out_of_sample_days: 30, anchored: true, objective: 'calmar' }))
  log(`walk-forward: rolling sharpe ${round(rolling.ms)} ms, anchored calmar ${round(anchored.ms)} ms`)
  const largest = sweepLikeReturns(24, LARGEST, DAYS)
  const large = timed(() => sweepStatistics(largest, bestBySharpe(largest), BLOCKS))
  log(`statistics for ${LARGEST} configurations: ${round(large.ms)} ms`)

  const failures: string[] = []
  if (statistics.pbo.combinations !== 12_870) failures.push(`CSCV ran ${statistics.pbo.combinations} combinations, not 12,870`)
  if (statistics.dsr === null || statistics.pbo.value === null) failures.push(`a statistic was null: ${JSON.stringify(statistics.reasons)}`)
  if (rolling.value.windows.length === 0 || anchored.value.windows.length === 0) failures.push('a walk-forward had no windows')
  return {
    report: {
      statistics: {
        configurations: CONFIGURATIONS,
        days: DAYS,
        blocks: BLOCKS,
        combinations: statistics.pbo.combinations,
        matrix: 'seeded: each configuration a share of one market (σ 3 %/day) plus its own noise (σ 1 %) and drift',
        runs: RUNS,
        median_ms: round(ms),
        best_ms: round(Math.min(...runs.map((run) => run.ms))),
        median_cpu_ms: round(median(runs.map((run) => run.cpuMs))),
        pbo: statistics.pbo.value,
        dsr: statistics.dsr,
        walk_forward_rolling_ms: round(rolling.ms),
        walk_forward_anchored_calmar_ms: round(anchored.ms),
        walk_forward_windows: rolling.value.windows.length,
        largest_configurations: LARGEST,
        largest_ms: round(large.ms),
        largest_cpu_ms: round(large.cpuMs),
        load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
      },
      goal: { statistics_ms: atMost(round(ms), GOAL_MS) },
    },
    failures,
  }
}
