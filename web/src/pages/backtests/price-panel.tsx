import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { api } from '../../api/endpoints.js'
import { usePriceDecimals } from '../../api/symbol-rules.js'
import type { Job, KlineInterval } from '../../api/types.js'
import { ErrorBox, Loading, useAsync } from '../../components/async.js'
import { TIMEFRAME_MS } from '../../components/templates.js'
import { PriceChart } from '../../charts/price-chart.js'

/** Kline intervals of the public klines mirror, finest first. */
const INTERVALS: [KlineInterval, number][] = [
  ['1m', 60_000],
  ['5m', 300_000],
  ['15m', 900_000],
  ['1h', 3_600_000],
  ['4h', 14_400_000],
  ['1d', 86_400_000],
  ['1w', 604_800_000],
]
const MAX_BARS = 1500
/** Candles per pixel of chart width at most: more than 1.5 a pixel draw as a smear on a phone. */
const BARS_PER_PX = 1.5

/**
 * The finest interval, no finer than the job's, that shows its whole span in one klines call
 * (≤ 1500 bars) and, on a chart `width` px wide, at most 1.5 candles a pixel (a phone shows a
 * half-year of 4 h bars as daily candles, a laptop keeps the 4 h).
 */
export function chartInterval(job: Job, width = Infinity): [KlineInterval, number] {
  const span = new Date(job.config.end).getTime() - new Date(job.config.start).getTime()
  const floor = (TIMEFRAME_MS as Record<string, number>)[job.config.timeframe] ?? 60_000
  const most = Math.min(MAX_BARS, width * BARS_PER_PX)
  return INTERVALS.find(([, ms]) => ms >= floor && span / ms <= most) ?? INTERVALS.at(-1)!
}

/** The element's width in CSS pixels, following resizes (Infinity until it is laid out). */
function useWidth(ref: { current: HTMLElement | null }): number {
  const [width, setWidth] = useState(Infinity)
  useEffect(() => {
    const element = ref.current
    if (!element) return
    const observer = new ResizeObserver(([entry]) => entry && entry.contentRect.width > 0 && setWidth(entry.contentRect.width))
    observer.observe(element)
    return () => observer.disconnect()
  }, [])
  return width
}

/** The traded symbol's candles over the backtest's span with every trade marked, once its width is known. */
export function PricePanel({ job }: { job: Job }) {
  const box = useRef<HTMLDivElement>(null)
  const width = useWidth(box)
  return <div ref={box}>{width < Infinity ? <PriceBody job={job} width={width} /> : null}</div>
}

/** Klines from the public mirror at the interval that suits `width`, read again only when that interval changes. */
function PriceBody({ job, width }: { job: Job; width: number }) {
  const [symbol, setSymbol] = useState(job.config.symbols[0]!)
  const [interval, intervalMs] = chartInterval(job, width)
  // The candles travel with their interval: until a resize's coarser candles arrive, the chart keeps the old pair.
  const klines = useAsync(
    async () => ({ rows: await api.klines(symbol, interval, new Date(job.config.start).getTime(), new Date(job.config.end).getTime()), intervalMs }),
    [symbol, interval, job.id],
  )
  const trades = useMemo(() => (job.result?.trades ?? []).filter((t) => t.symbol === symbol), [job, symbol])
  const decimals = usePriceDecimals([symbol])
  const configured = job.config.exits
  const exits = configured && (configured.stop_loss !== undefined || configured.take_profit !== undefined) ? { stopLoss: fraction(configured.stop_loss), takeProfit: fraction(configured.take_profit) } : undefined
  return (
    <div>
      <div class="toolbar">
        {job.config.symbols.length > 1 ? (
          <select value={symbol} onChange={(e) => setSymbol(e.currentTarget.value)} aria-label="Symbol">
            {job.config.symbols.map((s) => (
              <option key={s}>{s}</option>
            ))}
          </select>
        ) : (
          <strong>{symbol}</strong>
        )}
        <span class="muted">
          {interval} candles; ▲▼ entries, ● exits by signal, ■ protective exits (stop red, target green, trailing amber, liquidation purple); a number: that many fills share the marker until you zoom in
        </span>
        {exits ? (
          <span class="muted" data-testid="level-legend" title="Drawn from the job's configured exits at each entry price. A trailing stop's moves and levels a strategy module states are not in the result, so they are not drawn.">
            dashed: each trade's configured stop and target (entry × (1 ∓ fraction)), as set at entry; trailing stops' moves and a module's own levels are not drawn
          </span>
        ) : null}
      </div>
      <ErrorBox error={klines.error} />
      {klines.data ? <PriceChart klines={klines.data.rows} trades={trades} intervalMs={klines.data.intervalMs} priceDecimals={decimals(symbol)} testId="price-chart" exits={exits} /> : klines.error ? null : <Loading what="prices" />}
    </div>
  )
}

const fraction = (text: string | undefined) => (text === undefined ? undefined : Number(text))
