import type { HeatCell } from '../../charts/heat-cell.js'
import type { SweepRun } from '../../api/sweep-types.js'

/** Past this many distinct values a parameter's axis groups them into BINS equal ranges (a random search). */
const MAX_DISTINCT = 15
const BINS = 12

interface Axis {
  labels: string[]
  indexOf: (value: unknown) => number | undefined
}

/** An axis for a parameter: its distinct values in order, or equal ranges of them when there are many. */
function axisOf(runs: SweepRun[], param: string): Axis {
  const distinct = [...new Set(runs.map((r) => r.params[param]))].filter((v) => v !== undefined)
  const numbers = distinct.every((v) => typeof v === 'number')
  if (!numbers || distinct.length <= MAX_DISTINCT) {
    const sorted = numbers ? (distinct as number[]).sort((a, b) => a - b) : distinct.map(String).sort()
    const labels = sorted.map(String)
    return { labels, indexOf: (v) => (labels.indexOf(String(v)) >= 0 ? labels.indexOf(String(v)) : undefined) }
  }
  const values = distinct as number[]
  const lo = Math.min(...values)
  const hi = Math.max(...values)
  const width = (hi - lo) / BINS
  const round = (x: number) => String(Number(x.toPrecision(3)))
  const labels = Array.from({ length: BINS }, (_, i) => `${round(lo + i * width)}–${round(lo + (i + 1) * width)}`)
  return { labels, indexOf: (v) => (typeof v === 'number' ? Math.min(BINS - 1, Math.floor((v - lo) / width)) : undefined) }
}

/** The objective's value of a run as a number, or undefined when the metric is undefined (null). */
export function objectiveOf(run: SweepRun, objective: string): number | undefined {
  const raw = (run.metrics as Record<string, unknown>)[objective]
  if (raw === null || raw === undefined) return undefined
  const value = Number(raw)
  return Number.isFinite(value) ? value : undefined
}

/**
 * Cells of `x` against `y`: each holds the best objective among the runs that share its two values
 * (the other swept params vary inside a cell; the best is what choosing them would reach) and that
 * run's id; the first run wins a tie, as the sweep's best does. `y` null: one row. `blank` counts the
 * cells left empty: `unrun`, no run has those values (the template refused them together and the sweep
 * skipped them, or no random draw landed there); `undefined`, runs exist but none has the objective
 * (a Sharpe of a run that never traded).
 */
export function heatCells(runs: SweepRun[], x: string, y: string | null, objective: string): { xs: string[]; ys: string[]; cells: HeatCell[]; blank: { unrun: number; undefined: number } } {
  const xAxis = axisOf(runs, x)
  // One swept parameter: a single row.
  const yAxis: Axis = y === null ? { labels: ['all'], indexOf: () => 0 } : axisOf(runs, y)
  const best = new Map<string, HeatCell>()
  const run = new Set<string>()
  for (const one of runs) {
    const col = xAxis.indexOf(one.params[x])
    const row = yAxis.indexOf(y === null ? undefined : one.params[y])
    if (col === undefined || row === undefined) continue
    const key = `${col}:${row}`
    run.add(key)
    const value = objectiveOf(one, objective)
    if (value === undefined) continue
    const current = best.get(key)
    if (!current || value > current.value) best.set(key, { x: col, y: row, value, id: one.run_id })
  }
  const blank = { unrun: xAxis.labels.length * yAxis.labels.length - run.size, undefined: run.size - best.size }
  return { xs: xAxis.labels, ys: yAxis.labels, cells: [...best.values()], blank }
}

/** What the heatmap's blank cells mean, in words for its legend; null when no cell is blank. */
export function blankCellsText(blank: { unrun: number; undefined: number }, search: 'grid' | 'random', objectiveLabel: string): string | null {
  const parts: string[] = []
  const cells = (n: number) => `${n} cell${n === 1 ? '' : 's'}`
  if (blank.unrun > 0) {
    parts.push(
      search === 'grid'
        ? `${cells(blank.unrun)} with no run: the template refuses those values together, so the sweep skipped them`
        : `${cells(blank.unrun)} with no run: no random draw landed there`,
    )
  }
  if (blank.undefined > 0) parts.push(`${cells(blank.undefined)} whose runs have no ${objectiveLabel} (a run that never traded has none)`)
  return parts.length === 0 ? null : `Blank: ${parts.join('; ')}.`
}
