import { ambiguousText, exitReasonsText, exitsText, resolutionText } from '../../../../src/backtests/exit-text.js'
import type { Job, Metrics } from '../../api/types.js'
import { duration, money, num, pct } from '../../format.js'

type MetricName = keyof Metrics

/** The spec's metrics in reading order, each with how it is shown. */
export const METRICS: { name: MetricName; label: string; show: (m: Metrics) => string }[] = [
  { name: 'cagr', label: 'CAGR', show: (m) => pct(m.cagr) },
  { name: 'sharpe', label: 'Sharpe', show: (m) => num(m.sharpe) },
  { name: 'sortino', label: 'Sortino', show: (m) => num(m.sortino) },
  { name: 'calmar', label: 'Calmar', show: (m) => num(m.calmar) },
  { name: 'max_drawdown', label: 'Max drawdown', show: (m) => pct(m.max_drawdown) },
  { name: 'win_rate', label: 'Win rate', show: (m) => pct(m.win_rate, 1) },
  { name: 'profit_factor', label: 'Profit factor', show: (m) => num(m.profit_factor) },
  { name: 'expected_value', label: 'Expected value / trade', show: (m) => money(m.expected_value) },
  { name: 'total_trades', label: 'Trades', show: (m) => String(m.total_trades) },
  { name: 'avg_trade_duration_seconds', label: 'Avg trade', show: (m) => duration(m.avg_trade_duration_seconds) },
]

/** The metrics as tiles; each carries the API's exact value in data-value. */
export function MetricsGrid({ metrics }: { metrics: Metrics }) {
  return (
    <dl class="metrics" data-testid="metrics">
      {METRICS.map((metric) => (
        <div key={metric.name} data-metric={metric.name} data-value={metrics[metric.name] === null ? 'null' : String(metrics[metric.name])}>
          <dt>{metric.label}</dt>
          <dd>{metric.show(metrics)}</dd>
        </div>
      ))}
    </dl>
  )
}

/**
 * A run with protective exits: what it ran with, what closed its trades, and how finely its exits were
 * judged (the strategy bars examined on each resolution; a bar examined on itself could not see which of
 * a stop and a target inside it came first). Nothing for a run without them.
 */
export function ExitFacts({ job }: { job: Job }) {
  const result = job.result!
  const rows: [string, string, string | undefined, string?][] = [
    ['exits', 'Protective exits', exitsText(job.config.exits)],
    ['slippage', 'Slippage', job.config.slippage_bps === undefined ? undefined : `${job.config.slippage_bps} bps`],
    ['exit-reasons', 'Exit reasons', exitReasonsText(result.metrics.exit_reasons)],
    ['exit-resolution', 'Exit resolution', resolutionText(result.exit_resolution), 'Per symbol, the strategy bars holding a protected position, by the bars their exits were examined on'],
    ['ambiguous-exits', 'Ambiguous exits', ambiguousText(result.ambiguous_exits), 'Examined bars whose range held both a stop-side and a target-side level: the order inside the bar is unknown, the stop side filled'],
  ]
  const shown = rows.filter((row) => row[2] !== undefined)
  if (shown.length === 0) return null
  return (
    <dl class="facts exit-facts" data-testid="exit-facts">
      {shown.map(([key, label, text, title]) => (
        <div key={key} data-testid={key} title={title}>
          <dt>{label}</dt>
          <dd>{text}</dd>
        </div>
      ))}
    </dl>
  )
}
