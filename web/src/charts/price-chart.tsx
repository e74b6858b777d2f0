import { CandlestickSeries, createSeriesMarkers, type SeriesMarker, type Time, type UTCTimestamp } from 'lightweight-charts'
import { useEffect, useRef } from 'preact/hooks'
import { expose, newChart, seconds, type ChartHost } from './chart-host.js'
import type { BacktestTrade, KlineRow } from '../api/types.js'

/** Candles with each trade's entry and exit marked at the bar that holds it. */
export function PriceChart({ klines, trades, intervalMs, testId }: { klines: KlineRow[]; trades: BacktestTrade[]; intervalMs: number; testId: string }) {
  const ref = useRef<ChartHost>(null)
  useEffect(() => {
    const container = ref.current!
    const chart = newChart(container)
    const candles = chart.addSeries(CandlestickSeries, { upColor: '#1a9d62', downColor: '#d4414b', borderVisible: false, wickUpColor: '#1a9d62', wickDownColor: '#d4414b' })
    candles.setData(klines.map((k) => ({ time: (Number(k[0]) / 1000) as UTCTimestamp, open: Number(k[1]), high: Number(k[2]), low: Number(k[3]), close: Number(k[4]) })))
    const first = Number(klines[0]?.[0] ?? 0)
    const last = Number(klines.at(-1)?.[0] ?? 0)
    // A marker sits on a bar: the bar of the chart's interval that holds the fill time.
    const barOf = (iso: string) => {
      const ms = new Date(iso).getTime()
      return seconds(first + Math.floor((ms - first) / intervalMs) * intervalMs)
    }
    const inRange = (iso: string) => {
      const ms = new Date(iso).getTime()
      return ms >= first && ms < last + intervalMs
    }
    const markers: SeriesMarker<Time>[] = []
    // Labels help with a few trades and hide the candles when there are many.
    const labelled = trades.length <= 30
    for (const trade of trades) {
      const long = trade.side === 'buy'
      if (inRange(trade.entry_time)) {
        markers.push({ time: barOf(trade.entry_time) as UTCTimestamp, position: long ? 'belowBar' : 'aboveBar', shape: long ? 'arrowUp' : 'arrowDown', color: long ? '#1a9d62' : '#d4414b', ...(labelled ? { text: `#${trade.id} ${long ? 'long' : 'short'}` } : {}), id: `entry-${trade.id}` })
      }
      if (inRange(trade.exit_time)) {
        markers.push({ time: barOf(trade.exit_time) as UTCTimestamp, position: long ? 'aboveBar' : 'belowBar', shape: 'circle', color: '#6b7280', ...(labelled ? { text: `#${trade.id} exit` } : {}), id: `exit-${trade.id}` })
      }
    }
    markers.sort((a, b) => (a.time as number) - (b.time as number))
    const plugin = createSeriesMarkers(candles, markers)
    chart.timeScale().fitContent()
    expose(container, [candles])
    container.dataset.markers = String(plugin.markers().length)
    return () => {
      container.chartSeries = undefined
      chart.remove()
    }
  }, [klines, trades, intervalMs])
  return <div ref={ref} class="chart" style={{ height: '340px' }} data-testid={testId} role="img" aria-label="Price with trade entries and exits" />
}
