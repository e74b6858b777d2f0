import type { SweepRun } from '../../api/sweep-types.js'
import { objectiveOf } from './heatmap-cells.js'

/** A column of the runs table and its direction. */
export type RunSort = { key: string; descending: boolean }

/** A sort key's value for a run: `param.<name>` or a metric's name; undefined sorts last either way. */
function sortValue(run: SweepRun, key: string): number | string | undefined {
  if (key === 'run') return Number(run.run_id.slice(1))
  if (key.startsWith('param.')) {
    const v = run.params[key.slice(6)]
    return typeof v === 'number' ? v : v === undefined ? undefined : String(v)
  }
  return objectiveOf(run, key)
}

/** Runs in `sort` order; runs without a value last, ties in run order. */
export function sortRuns(runs: SweepRun[], sort: RunSort): SweepRun[] {
  const order = (run: SweepRun) => Number(run.run_id.slice(1))
  return [...runs].sort((a, b) => {
    const va = sortValue(a, sort.key)
    const vb = sortValue(b, sort.key)
    if (va === undefined || vb === undefined) return va === vb ? order(a) - order(b) : va === undefined ? 1 : -1
    const by = va < vb ? -1 : va > vb ? 1 : 0
    return (sort.descending ? -by : by) || order(a) - order(b)
  })
}

