import type { ReturnsMatrix } from './returns.js'
import { runId } from './returns.js'
import type { SweepConfig } from './schemas.js'
import { sweepStatistics, walkForward } from './statistics/index.js'

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
  const statistics = sweepStatistics(matrix.columns, best, config.cscv_blocks)
  const walk = config.walk_forward
  return {
    best: { run_id: runId(matrix.runNos[best]!), params: matrix.params[best], metrics: matrix.metrics[best] },
    statistics,
    ...(walk
      ? {
          walk_forward: walkForward({
            returns: matrix.columns,
            days: matrix.days,
            in_sample_days: walk.in_sample_days,
            out_of_sample_days: walk.out_of_sample_days,
            anchored: walk.anchored ?? false,
            capital: Number(config.base.capital),
          }),
        }
      : {}),
  }
}
