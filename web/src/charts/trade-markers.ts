import type { SeriesMarker, SeriesMarkerShape, Time, UTCTimestamp } from 'lightweight-charts'
import type { BacktestTrade } from '../api/types.js'

/** The least room a marker group gets on the time axis, in pixels: closer events share one marker. */
export const MARKER_PX = 20
/** Up to this many trades in sight, each marker says which trade it is. */
const LABELLED = 30

/** One fill to mark: the bar (index into the candles) that holds it and what it is. */
export interface TradeEvent {
  bar: number
  kind: 'long' | 'short' | 'exit-long' | 'exit-short'
  trade: number
}

const STYLE: Record<TradeEvent['kind'], { position: 'aboveBar' | 'belowBar'; shape: SeriesMarkerShape; color: string; word: string }> = {
  long: { position: 'belowBar', shape: 'arrowUp', color: '#1a9d62', word: 'long' },
  short: { position: 'aboveBar', shape: 'arrowDown', color: '#d4414b', word: 'short' },
  'exit-long': { position: 'aboveBar', shape: 'circle', color: '#6b7280', word: 'exit' },
  'exit-short': { position: 'belowBar', shape: 'circle', color: '#6b7280', word: 'exit' },
}

/**
 * Each trade's entry and exit on the bar of `barTimes` (ascending open times, Unix seconds; bars
 * `intervalSeconds` long) that holds it; fills outside the bars are left out.
 */
export function tradeEvents(trades: BacktestTrade[], barTimes: number[], intervalSeconds: number): TradeEvent[] {
  const first = barTimes[0]
  if (first === undefined) return []
  const end = barTimes.at(-1)! + intervalSeconds
  const barOf = (iso: string): number | undefined => {
    const at = Date.parse(iso) / 1000
    if (at < first || at >= end) return undefined
    // The last bar opening at or before the fill (bars may be missing in a gap).
    let lo = 0
    let hi = barTimes.length - 1
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1
      if (barTimes[mid]! <= at) lo = mid
      else hi = mid - 1
    }
    return lo
  }
  const events: TradeEvent[] = []
  for (const trade of trades) {
    const long = trade.side === 'buy'
    const entry = barOf(trade.entry_time)
    if (entry !== undefined) events.push({ bar: entry, kind: long ? 'long' : 'short', trade: trade.id })
    const exit = barOf(trade.exit_time)
    if (exit !== undefined) events.push({ bar: exit, kind: long ? 'exit-long' : 'exit-short', trade: trade.id })
  }
  return events.sort((a, b) => a.bar - b.bar)
}

/**
 * The markers for `events` when `barsPerGroup` bars share one marker of each kind: a group of one
 * says which trade it is (while few trades are in sight), a larger group how many fills it holds
 * ("12"), drawn on its first event's bar. At most two markers stack on either side of a bar.
 */
export function groupMarkers(events: TradeEvent[], barTimes: number[], barsPerGroup: number, inSight: number): SeriesMarker<Time>[] {
  const groups = new Map<string, { bar: number; kind: TradeEvent['kind']; trades: number[] }>()
  for (const event of events) {
    const key = `${Math.floor(event.bar / barsPerGroup)}:${event.kind}`
    const group = groups.get(key)
    if (group) group.trades.push(event.trade)
    else groups.set(key, { bar: event.bar, kind: event.kind, trades: [event.trade] })
  }
  const markers: SeriesMarker<Time>[] = []
  for (const { bar, kind, trades } of groups.values()) {
    const { word, ...style } = STYLE[kind]
    const text = trades.length > 1 ? String(trades.length) : inSight <= LABELLED ? `#${trades[0]} ${word}` : undefined
    markers.push({ time: barTimes[bar]! as UTCTimestamp, ...style, ...(text ? { text } : {}), id: `${kind}-${trades[0]}` })
  }
  return markers.sort((a, b) => (a.time as number) - (b.time as number))
}
