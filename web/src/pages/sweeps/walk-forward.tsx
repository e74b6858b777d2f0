import { useMemo } from 'preact/hooks'
import type { Sweep, WalkForwardResult } from '../../api/sweep-types.js'
import { TableWrap } from '../../components/async.js'
import { seconds } from '../../charts/chart-time.js'
import { LineChart, type Line } from '../../charts/line-chart.js'
import { num } from '../../format.js'
import { efficiencyWords, WALK_FORWARD_EFFICIENCY } from '../../../../src/sweeps/statistics-words.js'

type Span = WalkForwardResult['windows'][number]['in_sample']
const spanText = (span: Span) => `${span.first_day.slice(0, 10)} → ${span.last_day.slice(0, 10)}`
/** A window's out-of-sample metrics are of its days' returns: profit factor and win rate are the days' (`daily_…`). */
const sliceMetric = (metrics: WalkForwardResult['windows'][number]['out_of_sample_metrics'], objective: string): number | null | undefined =>
  (metrics as Record<string, number | null>)[objective] ?? (metrics as Record<string, number | null>)[`daily_${objective}`]

/**
 * The walk-forward: its efficiency, the stitched out-of-sample equity beside the in-sample one (the
 * sweep's best run, chosen with the whole history in sight, over the same days and from the same
 * starting equity), and each window's choice.
 */
export function WalkForward({ sweep, walk, bestEquity }: { sweep: Sweep; walk: WalkForwardResult; bestEquity: { time: number; value: number }[] | undefined }) {
  const objective = sweep.config.objective
  const lines = useMemo<Line[]>(() => {
    // [ISO day, equity] pairs; the generated type loses the tuple, hence the `!` and Number().
    const outOfSample = walk.curve.map(([at, equity]) => ({ time: seconds(at!), value: Number(equity) }))
    if (outOfSample.length === 0) return []
    const result: Line[] = [{ name: 'Out of sample (walk-forward)', color: '#e08a1e', points: outOfSample }]
    const first = outOfSample[0]!
    const from = bestEquity?.findIndex((p) => p.time >= first.time) ?? -1
    if (bestEquity && from >= 0) {
      const scale = first.value / bestEquity[from]!.value
      result.push({ name: 'In sample (best run)', color: '#3b6fd8', points: bestEquity.slice(from).map((p) => ({ time: p.time, value: p.value * scale })) })
    }
    return result
  }, [walk.curve, bestEquity])
  return (
    <div data-testid="walk-forward">
      <h2>Walk-forward</h2>
      <dl class="facts">
        <div data-statistic="efficiency" data-value={walk.efficiency === null ? 'null' : String(walk.efficiency)} title={WALK_FORWARD_EFFICIENCY}>
          <dt>Walk-forward efficiency</dt>
          <dd>{num(walk.efficiency)}</dd>
        </div>
        <div>
          <dt>Windows</dt>
          <dd>{walk.windows.length}</dd>
        </div>
      </dl>
      <p class="hint" data-testid="efficiency-words">
        {WALK_FORWARD_EFFICIENCY} Here: {efficiencyWords(walk.efficiency, walk.reason)}.
      </p>
      {lines.length > 0 ? (
        <LineChart lines={lines} testId="walk-forward-chart" label="The walk-forward's stitched out-of-sample equity beside the best run's in-sample equity" />
      ) : (
        <p class="hint">No out-of-sample curve: {walk.reason ?? 'no window fits the span'}.</p>
      )}
      <TableWrap>
        <table data-testid="windows-table">
          <thead>
            <tr>
              <th class="num">#</th>
              <th>In sample</th>
              <th>Out of sample</th>
              <th class="secondary">Run chosen</th>
              <th class="num">In-sample {objective}</th>
              <th class="num">Out-of-sample {objective}</th>
            </tr>
          </thead>
          <tbody>
            {walk.windows.map((w, i) => (
              <tr key={i} data-window={i} data-run-id={w.run_id}>
                <td class="num">{i + 1}</td>
                <td>{spanText(w.in_sample)}</td>
                <td>{spanText(w.out_of_sample)}</td>
                <td class="secondary">
                  {w.run_id} <code>{JSON.stringify(w.params)}</code>
                </td>
                <td class="num">{num(w.in_sample_metric)}</td>
                <td class="num">{num(sliceMetric(w.out_of_sample_metrics, objective))}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
    </div>
  )
}
