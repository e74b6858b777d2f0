import { useMemo } from 'preact/hooks'
import { drawdownCurve } from '../../../../src/engine/metrics.js'
import { api } from '../../api/endpoints.js'
import type { Job } from '../../api/types.js'
import { useAsync } from '../../components/async.js'
import { LineChart, type Line } from '../../charts/line-chart.js'
import { money, pct } from '../../format.js'
import { buyAndHold, equityPoints, holdInterval } from './result-figures.js'

const INTERVAL_MS = { '1d': 86_400_000, '1w': 604_800_000 }
const axisPercent = (value: number) => pct(value)

/**
 * The equity curve beside buying the job's symbols at the first close and holding them (from the klines
 * mirror, one call a symbol), and the drawdown; axes written as the cards write money and percentages.
 * Without the klines the equity is drawn alone.
 */
export function EquityPanel({ job }: { job: Job }) {
  const interval = holdInterval(job)
  const bars = useAsync(
    () => Promise.all(job.config.symbols.map((symbol) => api.klines(symbol, interval, new Date(job.config.start).getTime(), new Date(job.config.end).getTime()))),
    [job.id, interval],
  )
  const equity = useMemo<Line[]>(() => {
    const lines: Line[] = [{ name: 'Strategy', color: '#3b6fd8', points: equityPoints(job) }]
    const hold = bars.data ? buyAndHold(job, bars.data, INTERVAL_MS[interval]) : []
    if (hold.length > 0) lines.push({ name: 'Buy and hold', color: '#98a1b3', points: hold })
    return lines
  }, [job, bars.data])
  const drawdown = useMemo<Line[]>(() => {
    const points = equityPoints(job)
    const falls = drawdownCurve(points.map((p) => p.value))
    return [{ name: 'Drawdown', color: '#d4414b', points: points.map((p, i) => ({ time: p.time, value: falls[i]! })) }]
  }, [job])
  const symbols = job.config.symbols.length > 1 ? `${job.config.symbols.join(', ')}, an even share each` : job.config.symbols[0]
  return (
    <>
      <h2>Equity</h2>
      <LineChart lines={equity} testId="equity-chart" label={`Equity, one point per day, beside buying ${symbols} at the first close and holding`} format={money} />
      <p class="hint" data-testid="hold-legend">
        Grey: buying {symbols} at the run's first daily close with the whole capital and holding it, unlevered, no fees{bars.error ? ' (not drawn: the prices could not be read)' : ''}.
      </p>
      <h2>Drawdown</h2>
      <LineChart lines={drawdown} testId="drawdown-chart" label="Drawdown from the running peak" format={axisPercent} height={180} />
    </>
  )
}
