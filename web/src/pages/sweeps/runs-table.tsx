import { useMemo, useState } from 'preact/hooks'
import type { SweepRun } from '../../api/sweep-types.js'
import type { Metrics } from '../../api/types.js'
import { TableWrap } from '../../components/async.js'
import { Pager, usePages } from '../../components/pager.js'
import { METRICS } from '../backtests/metrics.js'
import { type RunSort, sortRuns } from './runs-order.js'

/** Metrics shown beside the objective; the rest stay on the run's backtest. */
const SHOWN: (keyof Metrics)[] = ['sharpe', 'cagr', 'max_drawdown', 'total_trades']

/**
 * Every run of the sweep: its swept params and metrics, sorted by any column (the objective, best
 * first, to start), a page of 100 at a time. A row's button opens the backtest form with its
 * configuration. Rows carry the run id and the objective's exact value in data-* attributes.
 */
export function RunsTable({ runs, params, objective, onBacktest }: { runs: SweepRun[]; params: string[]; objective: string; onBacktest: (run: SweepRun) => void }) {
  const [sort, setSort] = useState<RunSort>({ key: objective, descending: true })
  const sorted = useMemo(() => sortRuns(runs, sort), [runs, sort])
  const paging = usePages(sorted)
  const rows = paging.rows
  const metrics = [objective as keyof Metrics, ...SHOWN.filter((m) => m !== objective)]
  const by = (key: string) => {
    setSort((s) => (s.key === key ? { key, descending: !s.descending } : { key, descending: key !== 'run' && !key.startsWith('param.') }))
    paging.setPage(0)
  }
  const header = (key: string, label: string, className: string) => (
    <th class={className} aria-sort={sort.key === key ? (sort.descending ? 'descending' : 'ascending') : undefined} data-sort={key}>
      <button type="button" class="link" onClick={() => by(key)}>
        {label}
        {sort.key === key ? (sort.descending ? ' ↓' : ' ↑') : ''}
      </button>
    </th>
  )
  return (
    <div data-testid="runs" data-run-count={runs.length}>
      <TableWrap>
        <table data-testid="runs-table">
          <thead>
            <tr>
              {header('run', 'Run', '')}
              {params.map((p) => header(`param.${p}`, p, 'num'))}
              {metrics.map((m, i) => header(m, METRICS.find((x) => x.name === m)?.label ?? m, i === 0 ? 'num' : 'num secondary'))}
              <th />
            </tr>
          </thead>
          <tbody>
            {rows.map((run) => (
              <tr key={run.run_id} data-run-id={run.run_id} data-objective={String(run.metrics[objective as keyof Metrics])}>
                <td>{run.run_id}</td>
                {params.map((p) => (
                  <td key={p} class="num">
                    {String(run.params[p] ?? '—')}
                  </td>
                ))}
                {metrics.map((m, i) => (
                  <td key={m} class={i === 0 ? 'num' : 'num secondary'}>
                    {METRICS.find((x) => x.name === m)?.show(run.metrics) ?? String(run.metrics[m])}
                  </td>
                ))}
                <td>
                  <button type="button" class="link" onClick={() => onBacktest(run)} data-backtest={run.run_id}>
                    Backtest
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <Pager state={paging} testId="runs" />
    </div>
  )
}
