import { useEffect, useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import type { Strategy } from '../../api/types.js'
import { ErrorBox, Loading, TableWrap, toError, useAsync } from '../../components/async.js'
import { exitFieldError } from '../../components/exit-fields.js'
import { draftBody, StrategyFields, useStrategyDraft } from '../../components/strategy-fields.js'
import { num, pct, QUOTE, sign, time } from '../../format.js'
import { SERVER_CLOCK } from '../../components/clocks.js'
import { Link, navigate } from '../../router.js'
import { ModeBadge } from './run-mode.js'
import { TemplateName } from '../../components/template-name.js'

/** Every strategy of the user with its status and lifetime stats; a form to create one. */
export function StrategiesPage() {
  const [showForm, setShowForm] = useState(false)
  const [extra, setExtra] = useState<Strategy[]>([])
  const [cursor, setCursor] = useState<string | null | undefined>(undefined)
  const first = useAsync(() => api.strategies({ limit: 50 }), [])
  const [error, setError] = useState<Error>()
  const rows = [...(first.data?.data ?? []), ...extra]
  const next = cursor === undefined ? first.data?.next_cursor : cursor
  // Deployed strategies' stats move with every fill: re-read the first page every 10 s while one runs.
  const running = rows.some((s) => s.status === 'deployed')
  useEffect(() => {
    if (!running) return
    const timer = setInterval(first.reload, 10_000)
    return () => clearInterval(timer)
  }, [running, first.reload])

  return (
    <section>
      <div class="heading">
        <h1>Strategies</h1>
        <button type="button" class="primary" onClick={() => setShowForm((v) => !v)} data-testid="new-strategy">
          {showForm ? 'Close' : 'New strategy'}
        </button>
      </div>
      {showForm ? <StrategyForm /> : null}
      <ErrorBox error={first.error ?? error} />
      {first.loading && !first.data ? <Loading what="strategies" /> : null}
      <TableWrap>
        <table data-testid="strategies-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              <th>Mode</th>
              <th class="secondary">Template</th>
              <th class="secondary">Symbols</th>
              <th class="secondary">TF</th>
              <th class="num secondary">Capital ({QUOTE})</th>
              <th class="num">Open</th>
              <th class="num" data-key="pnl">PnL ({QUOTE})</th>
              <th class="num secondary">Trades</th>
              <th class="num secondary">Win rate</th>
              <th class="secondary" title={SERVER_CLOCK}>Deployed</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((s) => (
              <tr key={s.id} data-strategy-id={s.id} data-status={s.status}>
                <td>
                  <Link href={`/strategies/${s.id}`}>{s.name}</Link>
                </td>
                <td>
                  <span class={`badge ${s.status}`}>{s.status}</span>
                </td>
                <td>
                  <ModeBadge strategy={s} />
                </td>
                <td class="secondary">
                  <TemplateName id={s.template_id} version={s.template_version} />
                </td>
                <td class="secondary">{s.symbols.join(', ')}</td>
                <td class="secondary">{s.timeframe}</td>
                <td class="num secondary">{num(s.capital)}</td>
                <td class="num">{s.stats.open_positions}</td>
                <td class={`num ${sign(s.stats.total_pnl)}`}>{num(s.stats.total_pnl)}</td>
                <td class="num secondary">{s.stats.total_trades}</td>
                <td class="num secondary">{pct(s.stats.win_rate, 1)}</td>
                <td class="secondary">{time(s.deployed_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableWrap>
      {first.data && rows.length === 0 ? <p class="muted">No strategies yet: create one, or save a backtest as one.</p> : null}
      {next ? (
        <button
          type="button"
          onClick={() =>
            api.strategies({ limit: 50, cursor: next }).then(
              (page) => {
                setExtra((previous) => [...previous, ...page.data])
                setCursor(page.next_cursor)
              },
              (e: unknown) => setError(toError(e)),
            )
          }
        >
          More
        </button>
      ) : null}
    </section>
  )
}

/** A new strategy (draft): the template's params form, symbol, timeframe, capital and leverage. */
function StrategyForm() {
  const state = useStrategyDraft({ timeframe: '1h', capital: '1000' })
  const [name, setName] = useState('')
  const [error, setError] = useState<Error>()
  const submit = async (event: Event) => {
    event.preventDefault()
    setError(undefined)
    try {
      const strategy = await api.createStrategy({ name: name.trim(), ...draftBody(state.draft) })
      navigate(`/strategies/${strategy.id}`)
    } catch (failure) {
      setError(toError(failure))
    }
  }
  return (
    <form class="card form-grid" onSubmit={submit} data-testid="strategy-form">
      <label>
        Name
        <input name="name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <StrategyFields state={state} problem={exitFieldError(error)} />
      <div class="wide">
        <ErrorBox error={exitFieldError(error) ? undefined : error} />
        <button type="submit" class="primary" disabled={!state.template} data-testid="strategy-submit">
          Create
        </button>
      </div>
    </form>
  )
}
