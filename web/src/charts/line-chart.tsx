import { LineSeries, type ISeriesApi, type UTCTimestamp } from 'lightweight-charts'
import { useEffect, useRef } from 'preact/hooks'
import { pct } from '../format.js'
import { expose, fitRun, newChart, removeChart, unexpose, type ChartHost } from './chart-host.js'

export interface Line {
  name: string
  color: string
  /** Unix seconds, ascending, one value each. */
  points: { time: number; value: number }[]
}

const percentOf1 = (value: number) => pct(value, 1)

/**
 * Line series over time (equity curves, drawdown); `format` writes the axis and crosshair values (as the
 * page's cards write them: `money`, `pct`), `percent` as a percentage of 1.
 */
export function LineChart({ lines, testId, label, percent = false, format, height = 260 }: { lines: Line[]; testId: string; label: string; percent?: boolean; format?: (value: number) => string; height?: number }) {
  const ref = useRef<ChartHost>(null)
  const formatter = format ?? (percent ? percentOf1 : undefined)
  useEffect(() => {
    const container = ref.current!
    // One argument each: given only priceFormatter, the library maps the tick marks through it, passing each
    // mark's index as a second argument, which money()'s `digits` took ("8,000.00000 USDT" as the sixth mark).
    const one = formatter ? (value: number) => formatter(value) : undefined
    const chart = newChart(container, one ? { localization: { priceFormatter: one, tickmarksPriceFormatter: (prices: number[]) => prices.map(one) } } : {})
    const series: ISeriesApi<'Line'>[] = lines.map((line) => {
      const s = chart.addSeries(LineSeries, { color: line.color, lineWidth: 2, title: lines.length > 1 ? line.name : '', priceLineVisible: false })
      s.setData(line.points.map((p) => ({ time: p.time as UTCTimestamp, value: p.value })))
      return s
    })
    fitRun(chart)
    expose(container, chart, series)
    return () => {
      unexpose(container)
      removeChart(chart)
    }
  }, [lines, formatter])
  return <div ref={ref} class="chart" style={{ height: `${height}px` }} data-testid={testId} role="img" aria-label={label} />
}
