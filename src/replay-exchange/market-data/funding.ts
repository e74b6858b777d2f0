import { firstTime, lowerBound } from './recorded/bars.js'
import { DAY, HOUR } from '../common/intervals.js'
import type { MarketSymbol } from './market-symbol.js'
import { priceAt } from './prices.js'
import { unit } from '../common/seeded.js'

/**
 * Funding events: the recorded history where a symbol has one, derived on the symbol's own grid
 * elsewhere (every 8 hours, 00:00, 08:00, 16:00 UTC, unless the premium snapshot shows 1, 2 or 4):
 * before listing nothing, after the recording ends or for unrecorded symbols a rate from Binance's
 * formula over a seeded premium (README "Derived values").
 */

/** Binance's default funding interval. */
export const FUNDING_INTERVAL = 8 * HOUR

/** The symbol's funding interval in hours: the premium snapshot's (recorded.ts), else Binance's default 8. */
export function fundingIntervalHours(symbol: MarketSymbol): number {
  return symbol.snapshot?.fundingIntervalHours ?? FUNDING_INTERVAL / HOUR
}

const intervalOf = (symbol: MarketSymbol): number => fundingIntervalHours(symbol) * HOUR
/** Binance sent an empty markPrice in funding history before this date (SOURCES.md). */
const MARK_PRICE_RECORDED_FROM = Date.UTC(2023, 9, 31)

export interface FundingEvent {
  time: number
  rate: number
  /** undefined: sent as "" (Binance's own empty value for old rows). */
  markPrice: number | undefined
}

interface Timeline {
  /** Recorded times, ascending. */
  recorded: Float64Array
  /** First derived grid time (after the recording, or from listing when nothing is recorded). */
  derivedFrom: number
}

function timeline(symbol: MarketSymbol): Timeline {
  const rows = symbol.funding()
  const first = firstTime(symbol.main.bars())
  const listed = Math.max(first, symbol.info.onboardDate)
  if (rows && rows.time.length > 0) {
    const last = rows.time[rows.time.length - 1]!
    return { recorded: rows.time, derivedFrom: gridAfter(last + HOUR, intervalOf(symbol)) }
  }
  return { recorded: new Float64Array(0), derivedFrom: gridAfter(listed, intervalOf(symbol)) }
}

/** The first funding grid time at or after `time`. */
function gridAfter(time: number, interval: number): number {
  return Math.ceil(time / interval) * interval
}

/** Times of funding events in [from, to], ascending; `limit` taken from the start, or from the end when `fromEnd`. */
export function fundingTimes(symbol: MarketSymbol, from: number, to: number, limit: number, fromEnd: boolean): number[] {
  const t = timeline(symbol)
  const interval = intervalOf(symbol)
  const recorded: number[] = []
  const a = lowerBound(t.recorded, from)
  const b = lowerBound(t.recorded, to + 1)
  const derivedStart = gridAfter(Math.max(from, t.derivedFrom), interval)
  const derivedCount = to >= derivedStart ? Math.floor((to - derivedStart) / interval) + 1 : 0
  if (!fromEnd) {
    for (let i = a; i < b && recorded.length < limit; i++) recorded.push(t.recorded[i]!)
    for (let k = 0; k < derivedCount && recorded.length < limit; k++) recorded.push(derivedStart + k * interval)
    return recorded
  }
  const out: number[] = []
  for (let k = derivedCount - 1; k >= 0 && out.length < limit; k--) out.push(derivedStart + k * interval)
  for (let i = b - 1; i >= a && out.length < limit; i--) out.push(t.recorded[i]!)
  return out.reverse()
}

/** The funding event at exactly `time` (one of fundingTimes). */
export function fundingEvent(symbol: MarketSymbol, time: number): FundingEvent {
  const rows = symbol.funding()
  if (rows) {
    const i = lowerBound(rows.time, time)
    if (i < rows.time.length && rows.time[i] === time) {
      const mark = rows.markPrice[i]!
      return { time, rate: rows.rate[i]!, markPrice: Number.isNaN(mark) ? derivedMark(symbol, time) : mark }
    }
  }
  return { time, rate: derivedRate(symbol, time), markPrice: derivedMark(symbol, time) }
}

function derivedMark(symbol: MarketSymbol, time: number): number | undefined {
  return time < MARK_PRICE_RECORDED_FROM ? undefined : priceAt(symbol, time)
}

/**
 * Binance's rate = premium + clamp(interest − premium, ±0.05%), interest 0.01% per 8 h (pro rata for
 * shorter intervals), so most periods pay exactly the interest. The premium follows the 3-day return
 * (rallies pay longs' funding) plus seeded noise, scaled to the interval; capped at ±0.75%. The
 * premium snapshot's recorded rate wins for its period.
 */
function derivedRate(symbol: MarketSymbol, time: number): number {
  const share = intervalOf(symbol) / FUNDING_INTERVAL
  const snapshot = symbol.snapshot
  if (snapshot && snapshot.nextFundingTime === time) return snapshot.lastFundingRate
  const now = priceAt(symbol, time)
  const before = priceAt(symbol, time - 3 * DAY) ?? now
  const change = now !== undefined && before !== undefined && before > 0 ? now / before - 1 : 0
  const premium = share * (0.0015 * Math.tanh(4 * change) + 0.0004 * (unit(symbol.seed, time, 9) - 0.5))
  const rate = premium + Math.min(0.0005, Math.max(-0.0005, 0.0001 * share - premium))
  return Math.round(Math.min(0.0075, Math.max(-0.0075, rate)) * 1e8) / 1e8
}

/** The funding that settles next after `now`: its time on the symbol's grid, and its rate. */
export function nextFunding(symbol: MarketSymbol, now: number): { time: number; rate: number } {
  const interval = intervalOf(symbol)
  const time = Math.floor(now / interval) * interval + interval
  // Recorded times may carry Binance's millisecond offsets (08:00:00.001); match within a minute.
  const [event] = fundingTimes(symbol, time, time + 60_000, 1, false)
  return { time, rate: event === undefined ? derivedRate(symbol, time) : fundingEvent(symbol, event).rate }
}
