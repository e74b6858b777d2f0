import { ambiguousText, exitReasonsText, exitsText, resolutionText } from '../../backtests/exit-text.js'
import type { BacktestJob, BacktestJobSummary } from '../../client/operations.js'
import { type TemplateNamer, templateWithId } from '../template-names.js'
import { amount, decimal, duration, fieldTable, money, NONE, type Output, percent, QUOTE, table, time } from '../output.js'
import type { PriceOf } from '../prices.js'

/** A job: its configuration line, then its metrics (done) or its status (not done); its trades too when given `trades` (their prices' writer). */
export function printJob(output: Output, job: BacktestJob, name: TemplateNamer, trades?: PriceOf): void {
  const c = job.config
  output.out(`${job.id} ${job.status}: ${templateWithId(name, c.template_id, c.template_version)} ${c.symbols.join(',')} ${c.timeframe}, ${time(c.start)} to ${time(c.end)}, capital ${money(c.capital)}, leverage ${c.leverage}`)
  if (job.status !== 'done' || !job.result) {
    const rows: [string, string][] = [
      ['status', job.status],
      ['progress', percent(job.progress, 1)],
      ['submitted', time(job.submitted_at)],
      ['started', time(job.started_at)],
      ['finished', time(job.finished_at)],
    ]
    output.out(fieldTable(rows))
    // Below the table, not in it: a message of a few hundred characters (NO_DATA names the coverage) made the table that wide.
    if (job.error) output.out(`error: ${job.error.message} (${job.error.code})`)
    return
  }
  output.out(metricsTable(job))
  const exits = exitLines(job)
  if (exits.length > 0) output.out(exits.join('\n'))
  const warnings = warningsOf(job)
  if (warnings.length > 0) output.out(['warnings:', ...warnings.map((warning) => `  - ${warning}`)].join('\n'))
  if (trades) {
    output.out(
      table(
        ['#', 'side', 'symbol', 'entry', 'entry price', 'exit', 'exit price', 'exit reason', 'qty', `pnl (${QUOTE})`, `fee (${QUOTE})`, `funding (${QUOTE})`],
        (job.result.trades ?? []).map((t) => [
          t.id,
          t.side,
          t.symbol,
          time(t.entry_time),
          trades(t.symbol, t.entry_price),
          time(t.exit_time),
          trades(t.symbol, t.exit_price),
          t.exit_reason ?? NONE,
          t.qty,
          amount(t.pnl),
          amount(t.fee),
          amount(t.funding),
        ]),
      ),
    )
  }
}

/** The run's protective exits, when it had them: what it ran with, what closed its trades, how finely it looked. */
function exitLines(job: BacktestJob): string[] {
  const result = job.result!
  const lines: [string, string | undefined][] = [
    ['exits', exitsText(job.config.exits)],
    ['slippage', job.config.slippage_bps === undefined ? undefined : `${job.config.slippage_bps} bps`],
    ['exit reasons', exitReasonsText(result.metrics.exit_reasons)],
    ['exit resolution', resolutionText(result.exit_resolution)],
    ['ambiguous exits', ambiguousText(result.ambiguous_exits)],
  ]
  return lines.filter(([, text]) => text !== undefined).map(([label, text]) => `${label}: ${text}`)
}

/** What the result says the user must know (bars missing from the history …): `result.warnings`. */
function warningsOf(job: BacktestJob): string[] {
  return job.result?.warnings ?? []
}

/** The summary: final equity and return, fees and funding, then every metric of the result. */
export function metricsTable(job: BacktestJob): string {
  const result = job.result!
  const m = result.metrics
  const last = result.equity_curve?.at(-1)
  const capital = Number(job.config.capital)
  const final = result.final_equity !== undefined ? Number(result.final_equity) : last ? Number(last[1]) : undefined
  return table(
    ['metric', 'value'],
    [
      ['final equity', final === undefined ? NONE : money(final)],
      ['return', final === undefined || !(capital > 0) ? NONE : percent(final / capital - 1)],
      ['fees paid', money(result.fees_paid)],
      ['funding paid (negative: received)', money(result.funding_paid)],
      ['total trades', m.total_trades],
      ['win rate', percent(m.win_rate)],
      ['profit factor', decimal(m.profit_factor)],
      ['expected value / trade', money(m.expected_value)],
      ['max drawdown', percent(m.max_drawdown)],
      ['cagr', percent(m.cagr)],
      ['sharpe', decimal(m.sharpe)],
      ['sortino', decimal(m.sortino)],
      ['calmar', decimal(m.calmar)],
      ['avg trade duration', duration(m.avg_trade_duration_seconds)],
    ],
  )
}

export function printJobList(output: Output, jobs: BacktestJobSummary[], name: TemplateNamer): void {
  if (jobs.length === 0) return output.err('no backtests')
  output.out(
    table(
      ['id', 'status', 'progress', 'template', 'symbols', 'tf', 'from', 'to', 'submitted', 'trades', 'sharpe', 'max dd'],
      jobs.map((job) => {
        const m = job.result?.metrics
        return [
          job.id,
          job.status,
          percent(job.progress, 0),
          name(job.config.template_id, job.config.template_version),
          job.config.symbols.join(','),
          job.config.timeframe,
          time(job.config.start),
          time(job.config.end),
          time(job.submitted_at),
          m ? m.total_trades : NONE,
          m ? decimal(m.sharpe, 2) : NONE,
          m ? percent(m.max_drawdown) : NONE,
        ]
      }),
    ),
  )
}
