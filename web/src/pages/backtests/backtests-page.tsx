import { useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import type { Job } from '../../api/types.js'
import { ErrorBox, ListFooter, TableWrap } from '../../components/async.js'
import { useLiveList } from '../../components/live-list.js'
import { num, pct, time } from '../../format.js'
import { Link, navigate } from '../../router.js'
import { BacktestForm } from './backtest-form.js'
import { configToRepeat } from './repeat-config.js'
import { TemplateName } from '../../components/template-name.js'

/** Recent backtests (newest first, refreshed while any runs), a form for a new one, and picking two to compare. */
export function BacktestsPage() {
  const { rows: jobs, error, older } = useLiveList((cursor) => api.listBacktests({ limit: 20, cursor }))
  const [selected, setSelected] = useState<string[]>([])
  // Read once: "backtest this configuration" (a sweep's run) opens the form filled with it.
  const [repeat] = useState(() => configToRepeat(location.search))
  const [showForm, setShowForm] = useState(repeat !== undefined)

  const toggle = (id: string) =>
    setSelected((previous) => (previous.includes(id) ? previous.filter((x) => x !== id) : [...previous, id].slice(-2)))

  return (
    <section>
      <div class="heading">
        <h1>Backtests</h1>
        <button type="button" class="primary" onClick={() => setShowForm((v) => !v)} data-testid="new-backtest">
          {showForm ? 'Close' : 'New backtest'}
        </button>
      </div>
      {showForm ? <BacktestForm {...(repeat ? { initial: repeat } : {})} /> : null}
      <ErrorBox error={error} />
      <div class="toolbar">
        <span class="muted">{selected.length === 2 ? 'Two runs picked.' : 'Pick two finished runs to compare them.'}</span>
        <button type="button" disabled={selected.length !== 2} onClick={() => navigate(`/backtests/compare/${selected[0]}/${selected[1]}`)} data-testid="compare">
          Compare
        </button>
      </div>
      <TableWrap>
        <table data-testid="backtests-table">
          <thead>
            <tr>
              <th />
              <th>Job</th>
              <th>Status</th>
              <th class="secondary">Template</th>
              <th class="secondary">Symbols</th>
              <th class="secondary">TF</th>
              <th class="secondary">Span</th>
              <th class="num" data-key="cagr">CAGR</th>
              <th class="num" data-key="sharpe">Sharpe</th>
              <th class="num" data-key="max_drawdown">Max DD</th>
              <th class="num secondary">Trades</th>
              <th class="secondary">Submitted</th>
            </tr>
          </thead>
          <tbody>
            {jobs.map((job) => (
              <tr key={job.id} data-job-id={job.id} data-status={job.status}>
                <td>
                  <input type="checkbox" aria-label={`pick ${job.id}`} disabled={job.status !== 'done'} checked={selected.includes(job.id)} onChange={() => toggle(job.id)} data-pick={job.id} />
                </td>
                <td class="job-cell">
                  <Link href={`/backtests/${job.id}`}>{job.id}</Link>
                  {/* A phone hides the columns below: what ran, on what, over which days stays under the id. */}
                  <div class="phone-only job-summary" data-testid="job-summary">
                    <span data-field="template">
                      <TemplateName id={job.config.template_id} version={job.config.template_version} />
                    </span> · <span data-field="symbols">{job.config.symbols.join(', ')}</span> {job.config.timeframe} ·{' '}
                    <span data-field="span">
                      {job.config.start.slice(0, 10)} → {job.config.end.slice(0, 10)}
                    </span>
                  </div>
                </td>
                <td class="status">
                  <StatusBadge job={job} />
                </td>
                <td class="secondary">
                  <TemplateName id={job.config.template_id} version={job.config.template_version} />
                </td>
                <td class="secondary">{job.config.symbols.join(', ')}</td>
                <td class="secondary">{job.config.timeframe}</td>
                <td class="secondary">
                  {job.config.start.slice(0, 10)} → {job.config.end.slice(0, 10)}
                </td>
                <td class="num">{pct(job.result?.metrics.cagr)}</td>
                <td class="num">{num(job.result?.metrics.sharpe)}</td>
                <td class="num">{pct(job.result?.metrics.max_drawdown)}</td>
                <td class="num secondary">{job.result?.metrics.total_trades ?? '—'}</td>
                <td class="secondary">{time(job.submitted_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      <ListFooter empty="No backtests yet." shown={jobs.length} error={error} older={older} />
    </section>
  )
}

/** A job's or a sweep's status; a running one with its progress. */
export function StatusBadge({ job }: { job: Pick<Job, 'status' | 'progress'> }) {
  const label = job.status === 'running' ? `running ${Math.round(job.progress * 100)} %` : job.status
  return <span class={`badge ${job.status}`}>{label}</span>
}
