import { CandlestickSeries, createSeriesMarkers, LineSeries, LineStyle, LineType, type ISeriesApi, type LogicalRange, type SeriesType, type UTCTimestamp } from 'lightweight-charts'
import { useEffect, useRef } from 'preact/hooks'
import { expose, fitRun, newChart, removeChart, unexpose, type ChartHost } from './chart-host.js'
import { type ConfiguredExits, EXIT_STYLE, groupMarkers, levelSegments, MARKER_PX, tradeEvents } from './trade-markers.js'
import type { BacktestTrade, KlineRow } from '../api/types.js'

/**
 * Candles with each trade's entry and exit marked at the bar that holds it. Markers closer than
 * MARKER_PX share one (its count: "12") and split again as the user zooms in, so a 3-year run of 500 trades
 * reads as well as a week of five. `priceDecimals`: the symbol's tick decimals, for the price axis.
 */
export function PriceChart({
  klines,
  trades,
  intervalMs,
  priceDecimals,
  testId,
  exits,
}: {
  klines: KlineRow[]
  trades: BacktestTrade[]
  intervalMs: number
  priceDecimals: number | undefined
  testId: string
  /** The job's configured exits: each trade's initial stop and target are drawn over its life. */
  exits?: ConfiguredExits | undefined
}) {
  const ref = useRef<ChartHost>(null)
  useEffect(() => {
    const container = ref.current!
    const chart = newChart(container)
    const candles = chart.addSeries(CandlestickSeries, {
      upColor: '#1a9d62',
      downColor: '#d4414b',
      borderVisible: false,
      wickUpColor: '#1a9d62',
      wickDownColor: '#d4414b',
      ...(priceDecimals === undefined ? {} : { priceFormat: { type: 'price', precision: priceDecimals, minMove: 10 ** -priceDecimals } }),
    })
    candles.setData(klines.map((k) => ({ time: (Number(k[0]) / 1000) as UTCTimestamp, open: Number(k[1]), high: Number(k[2]), low: Number(k[3]), close: Number(k[4]) })))
    const barTimes = klines.map((k) => Number(k[0]) / 1000)
    const events = tradeEvents(trades, barTimes, intervalMs / 1000)
    // The axis fits the candles, not the markers (with markers in its autoscale, a long run's stacked
    // markers pushed it down to 0); the margins leave the markers room above and below.
    candles.priceScale().applyOptions({ scaleMargins: { top: 0.1, bottom: 0.1 } })
    const series: ISeriesApi<SeriesType>[] = [candles]
    if (exits && (exits.stopLoss !== undefined || exits.takeProfit !== undefined)) {
      const levels = levelSegments(trades, barTimes, intervalMs / 1000, exits)
      const lineOptions = { lineWidth: 1, lineStyle: LineStyle.Dashed, lineType: LineType.WithSteps, priceLineVisible: false, lastValueVisible: false, crosshairMarkerVisible: false, autoscaleInfoProvider: () => null } as const
      for (const [points, color, title] of [
        [levels.stop, EXIT_STYLE.stop_loss!.color, 'configured stop'],
        [levels.target, EXIT_STYLE.take_profit!.color, 'configured target'],
      ] as const) {
        if (points.length === 0) continue
        const line = chart.addSeries(LineSeries, { ...lineOptions, color, title })
        line.setData(points)
        series.push(line)
      }
      container.dataset.levelPoints = String(levels.stop.filter((p) => p.value !== undefined).length + levels.target.filter((p) => p.value !== undefined).length)
    }
    const plugin = createSeriesMarkers(candles, [], { autoScale: false })
    let drawn = ''
    const regroup = (range: LogicalRange | null) => {
      if (!range) return
      const width = chart.timeScale().width() || container.clientWidth
      const barsInSight = Math.max(1, range.to - range.from)
      const barsPerGroup = Math.max(1, Math.ceil(MARKER_PX / (width / barsInSight)))
      const inSight = events.filter((e) => e.bar >= range.from && e.bar <= range.to).length / 2
      const markers = groupMarkers(events, barTimes, barsPerGroup, inSight)
      const key = `${barsPerGroup}:${markers.some((m) => m.text?.startsWith('#'))}`
      if (key === drawn) return
      drawn = key
      plugin.setMarkers(markers)
      container.chartMarkers = markers
      container.dataset.markers = String(markers.length)
      container.dataset.markedFills = String(events.length)
      container.dataset.barsPerMarker = String(barsPerGroup)
    }
    fitRun(chart)
    regroup(chart.timeScale().getVisibleLogicalRange())
    chart.timeScale().subscribeVisibleLogicalRangeChange(regroup)
    expose(container, chart, series)
    return () => {
      chart.timeScale().unsubscribeVisibleLogicalRangeChange(regroup)
      unexpose(container)
      removeChart(chart)
    }
  }, [klines, trades, intervalMs, priceDecimals, exits?.stopLoss, exits?.takeProfit])
  return <div ref={ref} class="chart" style={{ height: '340px' }} data-testid={testId} role="img" aria-label="Price with trade entries and exits" />
}
