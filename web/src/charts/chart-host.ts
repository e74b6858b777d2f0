import { createChart, type DeepPartial, type ChartOptions, type IChartApi, type ISeriesApi, type SeriesType } from 'lightweight-charts'

/**
 * A chart's container carries what it shows, for people (aria-label) and for the browser tests:
 * `data-series-lengths` (points per series) and `chartSeries`, the library's own series objects,
 * whose `data()` is exactly what is drawn.
 */
export interface ChartHost extends HTMLDivElement {
  chartSeries?: ISeriesApi<SeriesType>[]
}

export function newChart(container: HTMLElement, options: DeepPartial<ChartOptions> = {}): IChartApi {
  const style = getComputedStyle(document.documentElement)
  const text = style.getPropertyValue('--text').trim() || '#1f2430'
  const grid = style.getPropertyValue('--grid').trim() || '#e7e9ef'
  return createChart(container, {
    autoSize: true,
    layout: { background: { color: 'transparent' }, textColor: text, fontSize: 11 },
    grid: { vertLines: { color: grid }, horzLines: { color: grid } },
    timeScale: { borderColor: grid, timeVisible: true, secondsVisible: false },
    rightPriceScale: { borderColor: grid },
    crosshair: { mode: 0 },
    ...options,
  })
}

export function expose(container: ChartHost, series: ISeriesApi<SeriesType>[]): void {
  container.chartSeries = series
  container.dataset.seriesLengths = series.map((s) => s.data().length).join(',')
}

/** Unix seconds, as the library's UTCTimestamp. */
export const seconds = (value: string | number): number => Math.floor(new Date(value).getTime() / 1000)
