import { LineSeries, type ISeriesApi, type UTCTimestamp } from 'lightweight-charts'
import { useEffect, useRef } from 'preact/hooks'
import { expose, fitRun, newChart, removeChart, unexpose, type ChartHost } from './chart-host.js'

export interface Line {
  name: string
  color: string
  /** Unix seconds, ascending, one value each. */
  points: { time: number; value: number }[]
}

/** Line series over time (equity curves, drawdown); `percent` formats the axis as a percentage of 1. */
export function LineChart({ lines, testId, label, percent = false, height = 260 }: { lines: Line[]; testId: string; label: string; percent?: boolean; height?: number }) {
  const ref = useRef<ChartHost>(null)
  useEffect(() => {
    const container = ref.current!
    const chart = newChart(container, percent ? { localization: { priceFormatter: (p: number) => `${(p * 100).toFixed(1)}%` } } : {})
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
  }, [lines, percent])
  return <div ref={ref} class="chart" style={{ height: `${height}px` }} data-testid={testId} role="img" aria-label={label} />
}
