import { useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import { ErrorBox, ListFooter, TableWrap } from '../../components/async.js'
import { useLiveList } from '../../components/live-list.js'
import { num, time } from '../../format.js'
import { Link } from '../../router.js'
import { StatusBadge } from '../backtests/backtests-page.js'
import { SweepForm } from './sweep-form.js'
import { TemplateName } from '../../components/template-name.js'

/** The user's sweeps, newest first (refreshed while any runs), and the form for a new one. */
export function SweepsPage() {
  const { rows: sweeps, error, older } = useLiveList((cursor) => api.listSweeps({ limit: 20, cursor }))
  const [showForm, setShowForm] = useState(false)

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
                <td class="secondary">
                  <TemplateName id={sweep.config.base.template_id} version={sweep.config.base.template_version} />
                </td>
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
      <ListFooter empty="No sweeps yet." shown={sweeps.length} error={error} older={older} />
    </section>
  )
}
