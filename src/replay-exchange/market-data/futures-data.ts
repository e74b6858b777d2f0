import { firstTime, lowerBound } from './recorded/bars.js'
import type { SampleKind } from './recorded/data-files.js'
import { DAY, FIXED_MS, HOUR } from '../common/intervals.js'
import type { MarketSymbol } from './market-symbol.js'
import { priceAt, rangeStats } from './prices.js'
import { smooth, unit } from '../common/seeded.js'

/**
 * The /futures/data statistics. Binance publishes one row per period, stamped at the period's
 * start. Recorded samples are served where the period is a multiple of the sample's; everything
 * else is derived from the klines (README "Derived values").
 */

/** The periods of the /futures/data series (Binance's list), with their lengths from the kline intervals. */
export const PERIODS: Record<string, number> = Object.fromEntries(
  (['5m', '15m', '30m', '1h', '2h', '4h', '6h', '12h', '1d'] as const).map((period) => [period, FIXED_MS[period]]),
)

export interface PeriodQuery {
  period: number
  startTime: number | undefined
  endTime: number | undefined
  limit: number
}

/**
 * Row timestamps for a query, ascending: from startTime forwards, else the latest `limit` up to
 * endTime (or now). `complete` keeps only periods that have ended by `now` (taker volumes).
 */
export function periodTimes(symbol: MarketSymbol, q: PeriodQuery, now: number, complete: boolean): number[] {
  const listed = Math.max(firstTime(symbol.main.bars()), symbol.info.onboardDate)
  const first = Math.ceil(listed / q.period) * q.period
  const latest = Math.floor((complete ? now - q.period : now) / q.period) * q.period
  const last = Math.min(latest, q.endTime === undefined ? latest : Math.floor(q.endTime / q.period) * q.period)
  const times: number[] = []
  if (q.startTime !== undefined) {
    for (let t = Math.max(first, Math.ceil(q.startTime / q.period) * q.period); t <= last && times.length < q.limit; t += q.period) times.push(t)
    return times
  }
  for (let t = last; t >= first && times.length < q.limit; t -= q.period) times.push(t)
  return times.reverse()
}

function change(symbol: MarketSymbol, time: number, span: number): number {
  const now = priceAt(symbol, time)
  const before = priceAt(symbol, time - span)
  return now !== undefined && before !== undefined && before > 0 ? now / before - 1 : 0
}

function sample(symbol: MarketSymbol, kind: SampleKind, period: number, time: number): Record<string, number> | undefined {
  const source = symbol.samples.get(kind)
  if (!source || period % (PERIODS[source.period] ?? Number.NaN) !== 0) return undefined
  const rows = source.rows()
  const i = lowerBound(rows.time, time)
  if (rows.time[i] !== time) return undefined
  const out: Record<string, number> = {}
  for (const [name, values] of Object.entries(rows.values)) out[name] = values[i]!
  return out
}

export interface RatioRow {
  symbol: string
  longShortRatio: string
  longAccount: string
  shortAccount: string
  timestamp: number
}

export type RatioKind = 'globalLongShortAccountRatio' | 'topLongShortAccountRatio' | 'topLongShortPositionRatio'

/**
 * Derived long share: a per-symbol bias, slow seeded drift, and the 24h return. All accounts lean
 * long and against the move (retail buys dips, as in the recorded BTC sample: 0.45–0.69 long), top
 * accounts less so, top positions with it.
 */
function derivedLongShare(symbol: MarketSymbol, kind: RatioKind, time: number): number {
  const move = change(symbol, time, DAY)
  const drift = (periodMs: number, salt: number) => 2 * smooth(symbol.seed ^ salt, time, periodMs) - 1
  let share: number
  if (kind === 'globalLongShortAccountRatio') share = 0.55 + 0.1 * unit(symbol.seed, 11) + 0.08 * drift(18 * HOUR, 0x51) - 0.8 * move
  else if (kind === 'topLongShortAccountRatio') share = 0.52 + 0.08 * unit(symbol.seed, 12) + 0.06 * drift(24 * HOUR, 0x52) - 0.4 * move
  else share = 0.45 + 0.1 * unit(symbol.seed, 13) + 0.08 * drift(12 * HOUR, 0x53) + 0.6 * move
  return Math.min(0.85, Math.max(0.2, share))
}

export function ratioRows(symbol: MarketSymbol, kind: RatioKind, q: PeriodQuery, now: number): RatioRow[] {
  return periodTimes(symbol, q, now, false).map((timestamp) => {
    const recorded = sample(symbol, kind, q.period, timestamp)
    if (recorded) {
      return {
        symbol: symbol.info.symbol,
        longShortRatio: recorded.longShortRatio!.toFixed(4),
        longAccount: recorded.longAccount!.toFixed(4),
        shortAccount: recorded.shortAccount!.toFixed(4),
        timestamp,
      }
    }
    const long = Math.round(derivedLongShare(symbol, kind, timestamp) * 1e4) / 1e4
    const short = 1 - long
    return {
      symbol: symbol.info.symbol,
      longShortRatio: (long / short).toFixed(4),
      longAccount: long.toFixed(4),
      shortAccount: short.toFixed(4),
      timestamp,
    }
  })
}

export interface TakerRow {
  buySellRatio: string
  buyVol: string
  sellVol: string
  timestamp: number
}

/** Taker buy and sell volume per completed period: the klines' derived taker-buy share over the period. */
export function takerRows(symbol: MarketSymbol, q: PeriodQuery, now: number): TakerRow[] {
  return periodTimes(symbol, q, now, true).map((timestamp) => {
    const stats = rangeStats(symbol, timestamp, timestamp + q.period)
    const buy = stats?.takerBuyVolume ?? 0
    const sell = (stats?.volume ?? 0) - buy
    return { buySellRatio: sell > 0 ? (buy / sell).toFixed(4) : '0.0000', buyVol: buy.toFixed(4), sellVol: sell.toFixed(4), timestamp }
  })
}

export interface OpenInterestRow {
  symbol: string
  sumOpenInterest: string
  sumOpenInterestValue: string
  timestamp: number
}

const dailyVolumes = new WeakMap<MarketSymbol, Map<number, number>>()

/** Average daily volume over the 7 days before the day of `time` (memoised per symbol and day). */
export function averageDailyVolume(symbol: MarketSymbol, time: number): number {
  const day = Math.floor(time / DAY) * DAY
  let memo = dailyVolumes.get(symbol)
  if (!memo) dailyVolumes.set(symbol, (memo = new Map()))
  let volume = memo.get(day)
  if (volume === undefined) {
    volume = (rangeStats(symbol, day - 7 * DAY, day)?.volume ?? 0) / 7
    if (memo.size > 5000) memo.clear()
    memo.set(day, volume)
  }
  return volume
}

/**
 * Derived open interest in contracts on the step grid: a seeded 0.3–0.6 days of the symbol's average
 * daily volume, drifting ±15% over days (the recorded BTC sample, 2026-03, held about 0.5 days of volume).
 */
function derivedOpenInterest(symbol: MarketSymbol, time: number): number {
  const days = 0.3 + 0.3 * unit(symbol.seed, 14)
  const contracts = days * averageDailyVolume(symbol, time) * (0.85 + 0.3 * smooth(symbol.seed ^ 0x54, time, 2 * DAY))
  const step = symbol.info.stepSize
  return Math.round(contracts / step) * step
}

/**
 * Open interest in contracts at any time (/fapi/v1/openInterest): the recorded hourly sample of the
 * hour `time` falls in where there is one, so it agrees with the hourly openInterestHist row; else derived.
 */
export function openInterestAt(symbol: MarketSymbol, time: number): number {
  return sample(symbol, 'openInterestHist', HOUR, Math.floor(time / HOUR) * HOUR)?.sumOpenInterest ?? derivedOpenInterest(symbol, time)
}

export function openInterestRows(symbol: MarketSymbol, q: PeriodQuery, now: number): OpenInterestRow[] {
  return periodTimes(symbol, q, now, false).map((timestamp) => {
    const recorded = sample(symbol, 'openInterestHist', q.period, timestamp)
    if (recorded) {
      return {
        symbol: symbol.info.symbol,
        sumOpenInterest: recorded.sumOpenInterest!.toFixed(8),
        sumOpenInterestValue: recorded.sumOpenInterestValue!.toFixed(8),
        timestamp,
      }
    }
    const openInterest = derivedOpenInterest(symbol, timestamp)
    return {
      symbol: symbol.info.symbol,
      sumOpenInterest: openInterest.toFixed(8),
      sumOpenInterestValue: (openInterest * (priceAt(symbol, timestamp) ?? 0)).toFixed(8),
      timestamp,
    }
  })
}
