import { useEffect, useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import type { Sweep } from '../../api/sweep-types.js'
import { ErrorBox, TableWrap, toError } from '../../components/async.js'
import { num, time } from '../../format.js'
import { Link } from '../../router.js'
import { StatusBadge } from '../backtests/backtests-page.js'
import { SweepForm } from './sweep-form.js'

const ACTIVE = new Set(['queued', 'running'])

/** The user's sweeps, newest first (refreshed while any runs), and the form for a new one. */
export function SweepsPage() {
  const [sweeps, setSweeps] = useState<Sweep[]>([])
  const [cursor, setCursor] = useState<string | null>(null)
  const [error, setError] = useState<Error>()
  const [showForm, setShowForm] = useState(false)

  const loadFirst = () =>
    api.listSweeps({ limit: 20 }).then(
      (page) => {
        setSweeps((previous) => [...page.data, ...previous.filter((p) => !page.data.some((s) => s.id === p.id) && p.submitted_at < (page.data.at(-1)?.submitted_at ?? ''))])
        setCursor((previous) => previous ?? page.next_cursor)
      },
      (e: unknown) => setError(toError(e)),
    )
  useEffect(() => {
    void loadFirst()
  }, [])
  const running = sweeps.some((s) => ACTIVE.has(s.status))
  useEffect(() => {
    if (!running) return
    const timer = setInterval(() => void loadFirst(), 2_000)
    return () => clearInterval(timer)
  }, [running])
  const older = () =>
    api.listSweeps({ limit: 20, cursor }).then(
      (page) => {
        setSweeps((previous) => [...previous, ...page.data.filter((s) => !previous.some((p) => p.id === s.id))])
        setCursor(page.next_cursor)
      },
      (e: unknown) => setError(toError(e)),
    )

  return (
    <section>
      <div class="heading">
        <h1>Sweeps</h1>
        <button type="button" class="primary" onClick={() => setShowForm((v) => !v)} data-testid="new-sweep">
          {showForm ? 'Close' : 'New sweep'}
        </button>
      </div>
      {showForm ? <SweepForm /> : null}
      <ErrorBox error={error} />
      <TableWrap>
        <table data-testid="sweeps-table">
          <thead>
            <tr>
              <th>Sweep</th>
              <th>Status</th>
              <th class="secondary">Template</th>
              <th class="secondary">Symbols</th>
              <th class="secondary">TF</th>
              <th class="num">Runs</th>
              <th class="num" title="Probability of Backtest Overfitting">PBO</th>
              <th class="num" title="Deflated Sharpe Ratio of the best run">DSR</th>
              <th class="secondary">Submitted</th>
            </tr>
          </thead>
          <tbody>
            {sweeps.map((sweep) => (
              <tr key={sweep.id} data-sweep-id={sweep.id} data-status={sweep.status}>
                <td>
                  <Link href={`/sweeps/${sweep.id}`}>{sweep.id}</Link>
                </td>
                <td class="status">
                  <StatusBadge job={sweep} />
                </td>
                <td class="secondary">{sweep.config.base.template_id}</td>
                <td class="secondary">{sweep.config.base.symbols.join(', ')}</td>
                <td class="secondary">{sweep.config.base.timeframe}</td>
                <td class="num">{sweep.config.configurations}</td>
                <td class="num">{num(sweep.result?.statistics.pbo.value)}</td>
                <td class="num">{num(sweep.result?.statistics.dsr)}</td>
                <td class="secondary">{time(sweep.submitted_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {sweeps.length === 0 && !error ? <p class="muted">No sweeps yet.</p> : null}
      {cursor ? (
        <button type="button" onClick={() => void older()}>
          Older
        </button>
      ) : null}
    </section>
  )
}
