import type { SeriesMarker, SeriesMarkerShape, Time, UTCTimestamp } from 'lightweight-charts'
import type { BacktestTrade } from '../api/types.js'

/** The least room a marker group gets on the time axis, in pixels: closer events share one marker. */
export const MARKER_PX = 20
/** Up to this many trades in sight, each marker says which trade it is. */
const LABELLED = 30

/** One fill to mark: the bar (index into the candles) that holds it and what it is; an exit says what closed it. */
export interface TradeEvent {
  bar: number
  kind: 'long' | 'short' | 'exit-long' | 'exit-short'
  trade: number
  reason?: string | undefined
}

/** Each exit reason's colour and word, on the chart's markers and in the trades table alike. */
export const EXIT_STYLE: Record<string, { color: string; word: string; shape: SeriesMarkerShape }> = {
  signal: { color: '#6b7280', word: 'exit', shape: 'circle' },
  stop_loss: { color: '#d4414b', word: 'stop', shape: 'square' },
  take_profit: { color: '#1a9d62', word: 'target', shape: 'square' },
  trailing_stop: { color: '#d98e04', word: 'trail', shape: 'square' },
  liquidation: { color: '#7c3aed', word: 'liq', shape: 'square' },
  adl: { color: '#7c3aed', word: 'adl', shape: 'square' },
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
    if (exit !== undefined) events.push({ bar: exit, kind: long ? 'exit-long' : 'exit-short', trade: trade.id, reason: trade.exit_reason })
  }
  return events.sort((a, b) => a.bar - b.bar)
}

/**
 * The markers for `events` when `barsPerGroup` bars share one marker of each kind: a group of one
 * says which trade it is (while few trades are in sight), a larger group how many fills it holds
 * ("12"), drawn on its first event's bar. At most two markers stack on either side of a bar.
 */
export function groupMarkers(events: TradeEvent[], barTimes: number[], barsPerGroup: number, inSight: number): SeriesMarker<Time>[] {
  const groups = new Map<string, { bar: number; kind: TradeEvent['kind']; reason: string | undefined; trades: number[] }>()
  for (const event of events) {
    // Exits by different reasons keep their own markers: a stop and a target in one group would read as one.
    const key = `${Math.floor(event.bar / barsPerGroup)}:${event.kind}:${event.reason ?? ''}`
    const group = groups.get(key)
    if (group) group.trades.push(event.trade)
    else groups.set(key, { bar: event.bar, kind: event.kind, reason: event.reason, trades: [event.trade] })
  }
  const markers: SeriesMarker<Time>[] = []
  for (const { bar, kind, reason, trades } of groups.values()) {
    const exitStyle = reason !== undefined && reason !== 'signal' ? EXIT_STYLE[reason] : undefined
    const { word, ...style } = exitStyle ? { ...STYLE[kind], ...exitStyle } : STYLE[kind]
    const text = trades.length > 1 ? `${trades.length}${exitStyle ? ` ${exitStyle.word}` : ''}` : inSight <= LABELLED ? `#${trades[0]} ${word}` : exitStyle?.word
    markers.push({ time: barTimes[bar]! as UTCTimestamp, ...style, ...(text ? { text } : {}), id: `${kind}-${reason ?? 'signal'}-${trades[0]}` })
  }
  return markers.sort((a, b) => (a.time as number) - (b.time as number))
}

/** A trade's configured levels: fractions of its entry price against and in its favour (a job's config exits). */
export interface ConfiguredExits {
  stopLoss?: number | undefined
  takeProfit?: number | undefined
}

/**
 * Each trade's initial stop and target from the configured exits, bar by bar from its entry bar to its exit
 * bar (entry × (1 ∓ fraction), sides swapped for a short), with a break after each trade. Only the levels
 * set at entry: a trailing stop's moves and levels a module states are not in the result, so not drawn.
 */
export function levelSegments(trades: BacktestTrade[], barTimes: number[], intervalSeconds: number, exits: ConfiguredExits): { stop: LevelPoint[]; target: LevelPoint[] } {
  const stop = new Map<number, number>()
  const target = new Map<number, number>()
  const barAt = (iso: string) => {
    const at = Date.parse(iso) / 1000
    let index = barTimes.findIndex((t) => t > at)
    if (index === -1) index = at < barTimes.at(-1)! + intervalSeconds ? barTimes.length : -1
    return index - 1
  }
  for (const trade of trades) {
    const from = barAt(trade.entry_time)
    const to = barAt(trade.exit_time)
    if (from < 0 || to < 0) continue
    const entry = Number(trade.entry_price)
    const side = trade.side === 'buy' ? 1 : -1
    for (let bar = from; bar <= to; bar++) {
      if (exits.stopLoss !== undefined) stop.set(bar, entry * (1 - side * exits.stopLoss))
      if (exits.takeProfit !== undefined) target.set(bar, entry * (1 + side * exits.takeProfit))
    }
  }
  const points = (levels: Map<number, number>): LevelPoint[] => {
    const out: LevelPoint[] = []
    for (let bar = 0; bar < barTimes.length; bar++) {
      const value = levels.get(bar)
      if (value !== undefined) out.push({ time: barTimes[bar]! as UTCTimestamp, value })
      else if (levels.has(bar - 1)) out.push({ time: barTimes[bar]! as UTCTimestamp }) // whitespace: the segment ends
    }
    return out
  }
  return { stop: points(stop), target: points(target) }
}

/** A point of a level line, or a break (no value). */
export type LevelPoint = { time: UTCTimestamp; value?: number }
