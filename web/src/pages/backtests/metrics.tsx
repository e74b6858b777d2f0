import type { Metrics } from '../../api/types.js'
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
