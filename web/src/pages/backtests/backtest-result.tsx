import { useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import type { Job } from '../../api/types.js'
import { ErrorBox, TableWrap, toError } from '../../components/async.js'
import { money, pct, sign, time } from '../../format.js'
import { navigate } from '../../router.js'
import { ExitFacts, MetricsGrid } from './metrics.js'
import { EquityPanel } from './equity-panel.js'
import { PricePanel } from './price-panel.js'
import { resultFigures, tradesCsv } from './result-figures.js'
import { TradesTable } from './trades-table.js'
import { templateName, useTemplates } from '../../components/templates.js'

/** The result's warnings (partial data coverage, …); none from a server that does not send them. */
export function warningsOf(job: Job): string[] {
  const warnings = (job.result as { warnings?: unknown } | null | undefined)?.warnings
  return Array.isArray(warnings) ? warnings.filter((w): w is string => typeof w === 'string') : []
}

/** A finished backtest: its warnings first, then metrics, equity and drawdown, price with trades, the trades table. */
export function BacktestResult({ job }: { job: Job }) {
  const result = job.result!
  const warnings = warningsOf(job)
  const figures = resultFigures(job)

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
          <dt>Net profit</dt>
          <dd data-testid="net-profit" class={sign(figures.netProfit)}>{money(figures.netProfit)}</dd>
        </div>
        <div>
          <dt>Total return</dt>
          <dd data-testid="total-return" class={sign(figures.totalReturn)}>{pct(figures.totalReturn)}</dd>
        </div>
        <div>
          <dt>Final equity</dt>
          <dd data-testid="final-equity">{money(result.final_equity)}</dd>
        </div>
        <div>
          <dt>Fees paid</dt>
          <dd data-testid="fees-paid">{money(result.fees_paid)}</dd>
        </div>
        <div title="Fees paid over the gross profit (net profit plus fees): the part of what the strategy made that went to the exchange">
          <dt>Fees / gross profit</dt>
          <dd data-testid="fee-share">{figures.feeShare === undefined ? 'no gross profit' : pct(figures.feeShare, 1)}</dd>
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
      <EquityPanel job={job} />
      <h2>Price and trades</h2>
      <PricePanel job={job} />
      <div class="heading">
        <h2>Trades</h2>
        <TradesDownload job={job} />
      </div>
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
  // Until the user types one, the name follows the catalogue (a custom template's name arrives with it).
  const templates = useTemplates()
  const [typed, setName] = useState<string>()
  const name = typed ?? `${templateName(templates.data, job.config.template_id)} ${job.config.symbols.join(',')} ${job.config.timeframe}`
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

/** Every closed trade of the job as a CSV file (all pages of the table), made in the page. */
function TradesDownload({ job }: { job: Job }) {
  const trades = job.result?.trades ?? []
  const download = () => {
    const url = URL.createObjectURL(new Blob([tradesCsv(trades)], { type: 'text/csv' }))
    const link = document.createElement('a')
    link.href = url
    link.download = `${job.id}-trades.csv`
    link.click()
    setTimeout(() => URL.revokeObjectURL(url), 60_000)
  }
  return (
    <button type="button" onClick={download} disabled={trades.length === 0} data-testid="trades-csv">
      Download CSV
    </button>
  )
}
