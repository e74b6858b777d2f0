import { isoTime } from '../backtests/result-format.js'
import type { ReturnsMatrix } from './returns.js'
import { runId } from './returns.js'
import type { SweepConfig } from './schemas.js'
import { type DaySpan, sweepStatistics, walkForward } from './statistics/index.js'

/** The run the objective ranks first: the highest value, the first such run on a tie; runs without a value last. */
export function bestIndex(objectives: readonly (number | null)[]): number {
  let best = 0
  for (let i = 1; i < objectives.length; i++) {
    const value = objectives[i]
    const current = objectives[best]
    if (value !== null && value !== undefined && (current === null || current === undefined || value > current)) best = i
  }
  return best
}

/** A done sweep's result: its best run, the statistics of the matrix and, when asked, the walk-forward. */
export function sweepResult(config: SweepConfig, matrix: ReturnsMatrix): Record<string, unknown> {
  const best = bestIndex(matrix.objectives)
  const run = (index: number) => ({ run_id: runId(matrix.runNos[index]!), params: matrix.params[index]! })
  return {
    best: { ...run(best), metrics: matrix.metrics[best] },
    statistics: sweepStatistics(matrix.columns, best, config.cscv_blocks),
    ...(config.walk_forward ? { walk_forward: walkForwardOf(config, matrix, run) } : {}),
  }
}

/** The walk-forward over the same matrix, each window's choice named by its run, times as ISO. */
function walkForwardOf(config: SweepConfig, matrix: ReturnsMatrix, run: (index: number) => { run_id: string; params: Record<string, unknown> }) {
  const walk = config.walk_forward!
  const result = walkForward({
    returns: matrix.columns,
    days: matrix.days,
    in_sample_days: walk.in_sample_days,
    out_of_sample_days: walk.out_of_sample_days,
    anchored: walk.anchored ?? false,
    objective: config.objective,
    capital: Number(config.base.capital),
  })
  const span = (s: DaySpan) => ({ first_day: isoTime(s.first_day), last_day: isoTime(s.last_day), days: s.days })
  return {
    ...result,
    windows: result.windows.map(({ chosen, in_sample, out_of_sample, ...window }) => ({ in_sample: span(in_sample), out_of_sample: span(out_of_sample), ...run(chosen), ...window })),
    curve: result.curve.map(([time, equity]) => [isoTime(time), equity]),
  }
}
