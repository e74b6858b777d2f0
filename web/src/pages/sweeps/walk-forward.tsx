import { useMemo } from 'preact/hooks'
import type { Sweep, SweepRun } from '../../api/sweep-types.js'
import { TableWrap } from '../../components/async.js'
import { LineChart, type Line } from '../../charts/line-chart.js'
import { num } from '../../format.js'
import { readCurve, readWindow } from './result-shapes.js'

type WalkForwardResult = NonNullable<NonNullable<Sweep['result']>['walk_forward']>

/**
 * The walk-forward: its efficiency, the stitched out-of-sample equity beside the in-sample one (the
 * sweep's best run, chosen with the whole history in sight, over the same days and from the same
 * starting equity), and each window's choice.
 */
export function WalkForward({ sweep, walk, runs, bestEquity }: { sweep: Sweep; walk: WalkForwardResult; runs: SweepRun[] | undefined; bestEquity: { time: number; value: number }[] | undefined }) {
  const objective = sweep.config.objective
  // The returns matrix's columns are the runs in run order (r1 … rN).
  const inRunOrder = useMemo(() => [...(runs ?? [])].sort((a, b) => Number(a.run_id.slice(1)) - Number(b.run_id.slice(1))), [runs])
  const windows = walk.windows.map((w) => readWindow(w, objective, (column) => inRunOrder[column]?.params))
  const lines = useMemo<Line[]>(() => {
    const outOfSample = readCurve(walk.curve)
    if (!outOfSample || outOfSample.length === 0) return []
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
        <div data-statistic="efficiency" data-value={walk.efficiency === null ? 'null' : String(walk.efficiency)} title="Annualised out-of-sample return ÷ annualised in-sample return (Pardo); undefined when the in-sample return is not positive">
          <dt>Walk-forward efficiency</dt>
          <dd>{num(walk.efficiency)}</dd>
        </div>
        <div>
          <dt>Windows</dt>
          <dd>{walk.windows.length}</dd>
        </div>
      </dl>
      {lines.length > 0 ? (
        <LineChart lines={lines} testId="walk-forward-chart" label="The walk-forward's stitched out-of-sample equity beside the best run's in-sample equity" />
      ) : (
        <p class="hint">No out-of-sample curve in this result.</p>
      )}
      <TableWrap>
        <table data-testid="windows-table">
          <thead>
            <tr>
              <th class="num">#</th>
              <th>In sample</th>
              <th>Out of sample</th>
              <th class="secondary">Params chosen</th>
              <th class="num">In-sample {objective}</th>
              <th class="num">Out-of-sample {objective}</th>
            </tr>
          </thead>
          <tbody>
            {windows.map((w, i) =>
              w ? (
                <tr key={i} data-window={i}>
                  <td class="num">{i + 1}</td>
                  <td>{w.inSample}</td>
                  <td>{w.outOfSample}</td>
                  <td class="secondary">
                    <code>{JSON.stringify(w.params)}</code>
                  </td>
                  <td class="num">{num(w.inSampleMetric)}</td>
                  <td class="num">{num(w.outOfSampleMetric)}</td>
                </tr>
              ) : null,
            )}
          </tbody>
        </table>
      </TableWrap>
    </div>
  )
}
