import { useMemo } from 'preact/hooks'
import { fullJob } from '../../api/backtest-watch.js'
import type { Job } from '../../api/types.js'
import { ErrorBox, Loading, TableWrap, useAsync } from '../../components/async.js'
import { LineChart, type Line } from '../../charts/line-chart.js'
import { money } from '../../format.js'
import { Link } from '../../router.js'
import { equityPoints } from './result-figures.js'
import { METRICS } from './metrics.js'
import { templateName, useTemplates } from '../../components/templates.js'

const COLORS = ['#3b6fd8', '#e08a1e']

/**
 * Two runs side by side: configuration, metrics, and both equity curves as returns on their own
 * capital (so runs with different capital compare on one axis).
 */
export function ComparePage({ a, b }: { a: string; b: string }) {
  const templates = useTemplates()
  const jobs = useAsync(() => Promise.all([fullJob(a), fullJob(b)]), [a, b])
  const lines = useMemo<Line[]>(
    () =>
      (jobs.data ?? []).map((job, i) => {
        const capital = Number(job.config.capital)
        return { name: job.id, color: COLORS[i]!, points: equityPoints(job).map((p) => ({ time: p.time, value: p.value / capital - 1 })) }
      }),
    [jobs.data],
  )
  if (jobs.error) return <ErrorBox error={jobs.error} />
  if (!jobs.data) return <Loading what="both runs" />
  const [left, right] = jobs.data as [Job, Job]
  const notDone = jobs.data.filter((j) => j.status !== 'done')
  if (notDone.length > 0) return <p class="error">Only finished runs compare: {notDone.map((j) => `${j.id} is ${j.status}`).join(', ')}.</p>

  const configRows: [string, (j: Job) => string][] = [
    ['Template', (j) => templateName(templates.data, j.config.template_id, j.config.template_version)],
    ['Params', (j) => JSON.stringify(j.config.params)],
    ['Symbols', (j) => j.config.symbols.join(', ')],
    ['Timeframe', (j) => j.config.timeframe],
    ['Span', (j) => `${j.config.start.slice(0, 10)} → ${j.config.end.slice(0, 10)}`],
    ['Capital', (j) => money(j.config.capital)],
    ['Leverage', (j) => String(j.config.leverage)],
    ['Fees', (j) => j.config.fee_model + (j.config.fee_bps ? ` ${j.config.fee_bps} bps` : '')],
    ['Final equity', (j) => money(j.result?.final_equity)],
    ['Fees paid', (j) => money(j.result?.fees_paid)],
    ['Funding (+ paid)', (j) => money(j.result?.funding_paid)],
  ]
  return (
    <section data-testid="compare-page">
      <h1>Compare runs</h1>
      <TableWrap>
        <table class="compare" data-testid="compare-table">
          <thead>
            <tr>
              <th />
              {[left, right].map((j, i) => (
                <th key={j.id} data-job={j.id} style={{ color: COLORS[i] }}>
                  <Link href={`/backtests/${j.id}`}>{j.id}</Link>
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {configRows.map(([label, show]) => (
              <tr key={label} data-row={label}>
                <th>{label}</th>
                <td data-job={left.id}>{show(left)}</td>
                <td data-job={right.id}>{show(right)}</td>
              </tr>
            ))}
            {METRICS.map((metric) => (
              <tr key={metric.name} data-metric={metric.name}>
                <th>{metric.label}</th>
                {[left, right].map((j) => (
                  <td key={j.id} data-job={j.id} data-value={String(j.result!.metrics[metric.name])}>
                    {metric.show(j.result!.metrics)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <h2>Return on capital</h2>
      <LineChart lines={lines} testId="compare-chart" label="Both runs' equity as return on their capital" percent />
    </section>
  )
}
