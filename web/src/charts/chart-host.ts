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
 * A chart that fills its container's width and follows it. Sized by us, not the library's autoSize:
 * autoSize measures the container after creation, so a chart created on an already laid-out page (new
 * candles after a resize) fitted its run at width 0 and fell back to the default 6 px bars, the last
 * few dozen of the run. The visible time range is kept through a resize, and bars may be thinner than
 * the library's default 0.5 px, so a whole run fits a phone's width.
 */
export function newChart(container: HTMLElement, options: DeepPartial<ChartOptions> = {}): IChartApi {
  const style = getComputedStyle(document.documentElement)
  const text = style.getPropertyValue('--text').trim() || '#1f2430'
  const grid = style.getPropertyValue('--grid').trim() || '#e7e9ef'
  const chart = createChart(container, {
    width: container.clientWidth,
    height: container.clientHeight,
    layout: { background: { color: 'transparent' }, textColor: text, fontSize: 11 },
    grid: { vertLines: { color: grid }, horzLines: { color: grid } },
    timeScale: { borderColor: grid, timeVisible: true, secondsVisible: false, lockVisibleTimeRangeOnResize: true, minBarSpacing: 0.05 },
    rightPriceScale: { borderColor: grid },
    crosshair: { mode: 0 },
    ...options,
  })
  const observer = new ResizeObserver(() => {
    if (container.clientWidth > 0) chart.resize(container.clientWidth, container.clientHeight)
  })
  observer.observe(container)
  observers.set(chart, observer)
  return chart
}

const observers = new WeakMap<IChartApi, ResizeObserver>()

/** Stops following the container and removes the chart. */
export function removeChart(chart: IChartApi): void {
  observers.get(chart)?.disconnect()
  chart.remove()
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

export { seconds } from './chart-time.js'

/**
 * Shows the whole run, now and once more on the next frame: a chart created while the page re-lays
 * itself out (new candles after a resize) was seen keeping the library's default 6 px bars.
 */
export function fitRun(chart: IChartApi): void {
  chart.timeScale().fitContent()
  requestAnimationFrame(() => {
    try {
      chart.timeScale().fitContent()
    } catch {
      // removed meanwhile
    }
  })
}
