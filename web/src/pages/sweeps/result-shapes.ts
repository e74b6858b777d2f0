/**
 * Readers for the parts of a sweep's result whose shape issue 23 leaves open and the API types as
 * unknown (the logit histogram, the walk-forward's windows and curve). Each reads the shape branch
 * sweep-stats writes and returns undefined for anything else, so a page never breaks on a shape it
 * does not know; it shows that part as missing.
 */
import { seconds } from '../../charts/chart-time.js'

const isNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v)
const record = (v: unknown): Record<string, unknown> | undefined => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined)

/** `{edges, counts}`: counts.length bins, edges one more. */
export function readHistogram(value: unknown): { edges: number[]; counts: number[] } | undefined {
  const h = record(value)
  if (!h || !Array.isArray(h.edges) || !Array.isArray(h.counts)) return undefined
  if (!h.edges.every(isNumber) || !h.counts.every(isNumber) || h.edges.length !== h.counts.length + 1 || h.counts.length === 0) return undefined
  return { edges: h.edges, counts: h.counts }
}

/** A time (ISO or Unix ms) as chart seconds, or undefined. */
function timeOf(value: unknown): number | undefined {
  if (typeof value !== 'string' && !isNumber(value)) return undefined
  const at = seconds(value)
  return Number.isFinite(at) ? at : undefined
}

/** An equity curve, `[[time, equity], …]` or `[{date|time, equity|value}, …]`, as chart points (times ascending). */
export function readCurve(value: unknown): { time: number; value: number }[] | undefined {
  if (!Array.isArray(value)) return undefined
  const points: { time: number; value: number }[] = []
  for (const point of value) {
    const o = record(point)
    const at = timeOf(Array.isArray(point) ? point[0] : (o?.date ?? o?.time ?? o?.at))
    const v = Number(Array.isArray(point) ? point[1] : (o?.equity ?? o?.value))
    if (at === undefined || !Number.isFinite(v)) return undefined
    points.push({ time: at, value: v })
  }
  return points
}

/** A span as `{first_day, last_day}` (epoch ms, the statistics module's), `{start, end}` or `[start, end]`, as "YYYY-MM-DD → YYYY-MM-DD". */
export function spanText(value: unknown): string {
  const o = record(value)
  const [from, to] = Array.isArray(value) ? value : [o?.first_day ?? o?.start, o?.last_day ?? o?.end]
  const day = (v: unknown) => (typeof v === 'string' ? v.slice(0, 10) : isNumber(v) ? new Date(v).toISOString().slice(0, 10) : '?')
  return `${day(from)} → ${day(to)}`
}

export interface WalkWindow {
  inSample: string
  outOfSample: string
  params: Record<string, unknown>
  inSampleMetric: number | null
  /** The objective out of sample, when the window's metrics carry it. */
  outOfSampleMetric: number | null
}

/**
 * A walk-forward window: its spans, the params it chose (`params`, or `chosen`, the column of the
 * returns matrix, looked up by `paramsOfColumn`), the objective in and out of sample (the statistics
 * module names the daily forms of profit factor and win rate `daily_…`).
 */
export function readWindow(value: unknown, objective: string, paramsOfColumn: (column: number) => Record<string, unknown> | undefined): WalkWindow | undefined {
  const w = record(value)
  if (!w) return undefined
  const params = record(w.params) ?? (isNumber(w.chosen) ? paramsOfColumn(w.chosen) : undefined) ?? {}
  const metric = (v: unknown): number | null => {
    const n = typeof v === 'string' || isNumber(v) ? Number(v) : NaN
    return Number.isFinite(n) ? n : null
  }
  const outside = record(w.out_of_sample_metrics) ?? record(w.oos_metrics)
  return {
    inSample: spanText(w.in_sample),
    outOfSample: spanText(w.out_of_sample),
    params,
    inSampleMetric: metric(w.in_sample_metric),
    outOfSampleMetric: metric(outside?.[objective] ?? outside?.[`daily_${objective}`] ?? w.out_of_sample_metric),
  }
}
