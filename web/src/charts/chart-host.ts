import { createChart, type DeepPartial, type ChartOptions, type IChartApi, type ISeriesApi, type SeriesMarker, type SeriesType, type Time } from 'lightweight-charts'

/**
 * A chart's container carries what it shows, for people (aria-label) and for the browser tests:
 * `data-series-lengths` (points per series), `chartSeries`, the library's own series objects, whose
 * `data()` is exactly what is drawn, `chart`, the chart itself (its visible range and size), and
 * `chartMarkers`, the markers drawn on a price chart.
 */
export interface ChartHost extends HTMLDivElement {
  chartSeries?: ISeriesApi<SeriesType>[]
  chart?: IChartApi
  chartMarkers?: SeriesMarker<Time>[]
}

/**
 * A chart that fills its container's width and follows it (autoSize: the library's ResizeObserver
 * redraws at the new width). The visible time range is kept through a resize, and bars may be drawn
 * thinner than the library's default 0.5 px, so a whole run still fits a phone's width: on a 390 px
 * screen 1500 candles get 0.2 px each rather than the last 700 only.
 */
export function newChart(container: HTMLElement, options: DeepPartial<ChartOptions> = {}): IChartApi {
  const style = getComputedStyle(document.documentElement)
  const text = style.getPropertyValue('--text').trim() || '#1f2430'
  const grid = style.getPropertyValue('--grid').trim() || '#e7e9ef'
  return createChart(container, {
    autoSize: true,
    layout: { background: { color: 'transparent' }, textColor: text, fontSize: 11 },
    grid: { vertLines: { color: grid }, horzLines: { color: grid } },
    timeScale: { borderColor: grid, timeVisible: true, secondsVisible: false, lockVisibleTimeRangeOnResize: true, minBarSpacing: 0.05 },
    rightPriceScale: { borderColor: grid },
    crosshair: { mode: 0 },
    ...options,
  })
}

/**
 * Shows the whole series, now and again once the chart first has a width: a chart created before its
 * container is laid out (autoSize measures it a frame later) otherwise keeps the library's default
 * 6 px bars and shows only the last few dozen (seen on a phone after a resize read coarser candles).
 */
export function fitWhole(chart: IChartApi): void {
  const timeScale = chart.timeScale()
  timeScale.fitContent()
  const onSize = (width: number) => {
    if (width <= 0) return
    timeScale.unsubscribeSizeChange(onSize)
    timeScale.fitContent()
  }
  timeScale.subscribeSizeChange(onSize)
}

export function expose(container: ChartHost, chart: IChartApi, series: ISeriesApi<SeriesType>[]): void {
  container.chart = chart
  container.chartSeries = series
  container.dataset.seriesLengths = series.map((s) => s.data().length).join(',')
}

export function unexpose(container: ChartHost): void {
  container.chart = undefined
  container.chartSeries = undefined
  container.chartMarkers = undefined
}

/** Unix seconds, as the library's UTCTimestamp. */
export const seconds = (value: string | number): number => Math.floor(new Date(value).getTime() / 1000)
