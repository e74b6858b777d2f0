import { useMemo, useState } from 'preact/hooks'
import { drawdownCurve } from '../../../../src/engine/metrics.js'
import { api } from '../../api/endpoints.js'
import type { Job } from '../../api/types.js'
import { ErrorBox, TableWrap, toError } from '../../components/async.js'
import { seconds } from '../../charts/chart-host.js'
import { LineChart, type Line } from '../../charts/line-chart.js'
import { money, time } from '../../format.js'
import { navigate } from '../../router.js'
import { ExitFacts, MetricsGrid } from './metrics.js'
import { PricePanel } from './price-panel.js'
import { TradesTable } from './trades-table.js'

/** The equity curve as chart points: one per simulated day, as the API gives it. */
export function equityPoints(job: Job): { time: number; value: number }[] {
  // Pairs of [ISO time, decimal]; the generated type loses the tuple, hence the `!`.
  return (job.result?.equity_curve ?? []).map(([at, equity]) => ({ time: seconds(at!), value: Number(equity) }))
}

/** The result's warnings (partial data coverage, …); none from a server that does not send them. */
export function warningsOf(job: Job): string[] {
  const warnings = (job.result as { warnings?: unknown } | null | undefined)?.warnings
  return Array.isArray(warnings) ? warnings.filter((w): w is string => typeof w === 'string') : []
}

/** A finished backtest: its warnings first, then metrics, equity and drawdown, price with trades, the trades table. */
export function BacktestResult({ job }: { job: Job }) {
  const result = job.result!
  const warnings = warningsOf(job)
  const equity = useMemo<Line[]>(() => [{ name: 'Equity', color: '#3b6fd8', points: equityPoints(job) }], [job])
  const drawdown = useMemo<Line[]>(() => {
    const points = equityPoints(job)
    const falls = drawdownCurve(points.map((p) => p.value))
    return [{ name: 'Drawdown', color: '#d4414b', points: points.map((p, i) => ({ time: p.time, value: falls[i]! })) }]
  }, [job])

  return (
    <>
      {warnings.length > 0 ? (
        <div class="card notice" role="status" data-testid="warnings">
          <strong>
            {warnings.length === 1 ? 'A warning' : `${warnings.length} warnings`} about the history behind these figures
          </strong>
          <ul>
            {warnings.map((w) => (
              <li key={w}>{w}</li>
            ))}
          </ul>
        </div>
      ) : null}
      <MetricsGrid metrics={result.metrics} />
      <dl class="facts">
        <div>
          <dt>Final equity</dt>
          <dd data-testid="final-equity">{money(result.final_equity)}</dd>
        </div>
        <div>
          <dt>Fees paid</dt>
          <dd data-testid="fees-paid">{money(result.fees_paid)}</dd>
        </div>
        <div title="Net funding over the run: positive means the account paid it, negative that it received it">
          <dt>Funding (+ paid, − received)</dt>
          <dd data-testid="funding-paid">{money(result.funding_paid)}</dd>
        </div>
        <div>
          <dt>Open at end</dt>
          <dd>{result.open_positions?.length ?? 0}</dd>
        </div>
      </dl>
      <ExitFacts job={job} />
      <h2>Equity</h2>
      <LineChart lines={equity} testId="equity-chart" label="Equity, one point per day" />
      <h2>Drawdown</h2>
      <LineChart lines={drawdown} testId="drawdown-chart" label="Drawdown from the running peak" percent height={180} />
      <h2>Price and trades</h2>
      <PricePanel job={job} />
      <h2>Trades</h2>
      <TradesTable trades={result.trades ?? []} protective={result.metrics.exit_reasons !== undefined} />
      {result.gaps?.length ? (
        <>
          <h2>Gaps in the history</h2>
          <TableWrap>
            <table>
              <tbody>
                {result.gaps.map((g) => (
                  <tr key={`${g.symbol}${g.from}`}>
                    <td>{g.symbol}</td>
                    <td>
                      {time(g.from)} → {time(g.to)}
                    </td>
                    <td class="num">{g.missing_bars} bars</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </TableWrap>
        </>
      ) : null}
      <SaveAsStrategy job={job} warnings={warnings} />
    </>
  )
}

/**
 * Stores the backtest's configuration as a strategy (draft), ready to deploy. A result with warnings
 * is never saved silently: the form says what they mean and the save waits for the user to confirm it.
 */
function SaveAsStrategy({ job, warnings }: { job: Job; warnings: string[] }) {
  const [name, setName] = useState(`${job.config.template_id} ${job.config.symbols.join(',')} ${job.config.timeframe}`)
  const [confirmed, setConfirmed] = useState(false)
  const [error, setError] = useState<Error>()
  const save = async (event: Event) => {
    event.preventDefault()
    try {
      const { template_id, params, symbols, timeframe, capital, leverage, exits } = job.config
      const strategy = await api.createStrategy({ name, template_id, params, symbols, timeframe, capital, leverage, ...(exits ? { exits } : {}) })
      navigate(`/strategies/${strategy.id}`)
    } catch (failure) {
      setError(toError(failure))
    }
  }
  return (
    <form class="card inline-form" onSubmit={save} data-testid="save-strategy">
      <label>
        Save as strategy
        <input name="name" required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      {warnings.length > 0 ? (
        <label class="check" data-testid="save-remark">
          <input type="checkbox" name="confirm_partial" required checked={confirmed} onChange={(e) => setConfirmed(e.currentTarget.checked)} />
          This backtest ran on partial data ({warnings.length === 1 ? 'see the warning' : `see the ${warnings.length} warnings`} above): save it anyway
        </label>
      ) : null}
      <button type="submit" disabled={warnings.length > 0 && !confirmed}>
        {warnings.length > 0 ? 'Save anyway' : 'Save'}
      </button>
      <ErrorBox error={error} />
    </form>
  )
}
