import type { UpstreamRequest } from './market-data.js'

/**
 * Every upstream call the gateway makes, with Binance's weight and the cache TTL that fits its data
 * (the table is in docs/decisions/market-data.md, "Market data"). Stale answers are kept `staleMs` past the TTL to
 * serve while the upstream is unavailable or our weight budget is spent.
 */

export const PERIODS = ['5m', '15m', '30m', '1h', '2h', '4h', '6h', '12h', '1d'] as const
export type Period = (typeof PERIODS)[number]

const MINUTE = 60_000
const PERIOD_MS: Record<Period, number> = {
  '5m': 5 * MINUTE,
  '15m': 15 * MINUTE,
  '30m': 30 * MINUTE,
  '1h': 60 * MINUTE,
  '2h': 120 * MINUTE,
  '4h': 240 * MINUTE,
  '6h': 360 * MINUTE,
  '12h': 720 * MINUTE,
  '1d': 1440 * MINUTE,
}

export function periodMs(period: Period): number {
  return PERIOD_MS[period]
}

/**
 * A ratio series gains one point per period, published after the period closes. A tenth of the
 * period (30 s for 5m, capped at 5 min) bounds how late a new point shows while keeping the
 * /futures/data budget (1000 requests per 5 min per IP) far away.
 */
export function ratioTtlMs(period: Period): number {
  return Math.min(5 * MINUTE, Math.max(30_000, PERIOD_MS[period] / 10))
}

const STALE_MS = 10 * MINUTE

/** Binance's kline intervals. */
export const KLINE_INTERVALS = ['1m', '3m', '5m', '15m', '30m', '1h', '2h', '4h', '6h', '8h', '12h', '1d', '3d', '1w', '1M'] as const
export type KlineInterval = (typeof KLINE_INTERVALS)[number]

const KLINE_UNIT_MS: Record<string, number> = { m: MINUTE, h: 60 * MINUTE, d: 1440 * MINUTE, w: 7 * 1440 * MINUTE, M: 31 * 1440 * MINUTE }

/** An upper bound of an interval's length (a month as 31 days): its count times its unit. */
function klineIntervalMs(interval: KlineInterval): number {
  return Number.parseInt(interval, 10) * (KLINE_UNIT_MS[interval.slice(-1)] ?? Number.NaN)
}

export type RatioSeries = 'topLongShortPositionRatio' | 'topLongShortAccountRatio' | 'globalLongShortAccountRatio' | 'takerlongshortRatio' | 'openInterestHist'

export const upstream = {
  /** Mark price, index price and the current funding rate of every symbol. */
  premiumIndex: (): UpstreamRequest => ({ host: 'api', path: '/fapi/v1/premiumIndex', query: {}, weight: 10, ttlMs: 5_000, staleMs: STALE_MS }),

  /**
   * 24h statistics of every symbol. Weight 40: refreshed every second it alone would spend the whole
   * 2400 per minute, so every 2 s (1200 per minute at most).
   */
  tickers: (): UpstreamRequest => ({ host: 'api', path: '/fapi/v1/ticker/24hr', query: {}, weight: 40, ttlMs: 2_000, staleMs: STALE_MS }),

  /** Symbols, statuses and filters: they change a few times a day. */
  exchangeInfo: (): UpstreamRequest => ({ host: 'api', path: '/fapi/v1/exchangeInfo', query: {}, weight: 1, ttlMs: 60_000, staleMs: 60 * MINUTE }),

  /** Funding history; Binance counts it against a separate 500 per 5 min budget, which weight 1 stands for. */
  fundingHistory: (query: { symbol?: string; startTime?: number; endTime?: number; limit?: number }): UpstreamRequest => ({
    host: 'api',
    path: '/fapi/v1/fundingRate',
    query: { symbol: query.symbol, startTime: query.startTime, endTime: query.endTime, limit: query.limit },
    weight: 1,
    ttlMs: 5_000,
    staleMs: STALE_MS,
  }),

  /** Recent trades, oldest first. */
  trades: (symbol: string, limit: number, ttlMs = 1_000): UpstreamRequest => ({
    host: 'api',
    path: '/fapi/v1/trades',
    query: { symbol, limit },
    weight: 5,
    ttlMs,
    staleMs: STALE_MS,
  }),

  /**
   * Klines, weighed by limit as Binance does ([1,100) 1, [100,500) 2, [500,1000] 5, above 10). Bars
   * closed before `endTime` never change, so a window wholly in the past keeps for a minute; one
   * reaching the open bar for a second.
   */
  klines: (query: { symbol: string; interval: KlineInterval; startTime?: number; endTime?: number; limit: number }, now: number): UpstreamRequest => ({
    host: 'api',
    path: '/fapi/v1/klines',
    query: { symbol: query.symbol, interval: query.interval, startTime: query.startTime, endTime: query.endTime, limit: query.limit },
    weight: klinesWeight(query.limit),
    ttlMs: query.endTime !== undefined && query.endTime + klineIntervalMs(query.interval) < now ? 60_000 : 1_000,
    staleMs: STALE_MS,
  }),

  /** One of the /futures/data series (weight 0; their own request budget), optionally over a time range. */
  series: (series: RatioSeries, symbol: string, period: Period, limit: number, range: TimeRange = {}): UpstreamRequest => ({
    host: 'data',
    path: `/futures/data/${series}`,
    query: { symbol, period, limit, startTime: range.startTime, endTime: range.endTime },
    weight: 0,
    ttlMs: ratioTtlMs(period),
    staleMs: STALE_MS,
  }),

  /** Connectivity: the answer never changes. */
  ping: (): UpstreamRequest => ({ host: 'api', path: '/fapi/v1/ping', query: {}, weight: 1, ttlMs: 10_000, staleMs: STALE_MS }),

  /** The exchange's clock; held 10 s and read forward by our clock meanwhile (see mirror/server-time.ts). */
  time: (): UpstreamRequest => ({ host: 'api', path: '/fapi/v1/time', query: {}, weight: 1, ttlMs: 10_000, staleMs: 0 }),

  /** Contracts open in one symbol: it moves with every trade, and there is no all-symbols form. */
  openInterest: (symbol: string): UpstreamRequest => ({ host: 'api', path: '/fapi/v1/openInterest', query: { symbol }, weight: 1, ttlMs: 5_000, staleMs: STALE_MS }),

  /**
   * Funding caps, floors and intervals of the symbols that differ from the default: changed by
   * announcement. Binance counts it with fundingRate (500 per 5 min), which weight 1 stands for.
   */
  fundingInfo: (): UpstreamRequest => ({ host: 'api', path: '/fapi/v1/fundingInfo', query: {}, weight: 1, ttlMs: 60_000, staleMs: 60 * MINUTE }),

  /** Last price of every symbol (weight 2): one answer serves every symbol's request. */
  tickerPrices: (): UpstreamRequest => ({ host: 'api', path: '/fapi/v1/ticker/price', query: {}, weight: 2, ttlMs: 1_000, staleMs: STALE_MS }),

  /**
   * One symbol's answer of an endpoint that also has an all-symbols form: asked for only when the
   * all-symbols answer lacks a listed symbol, to forward the exchange's own reply.
   */
  oneSymbol: (all: UpstreamRequest, symbol: string): UpstreamRequest => ({ ...all, query: { symbol }, weight: 1 }),
}

export interface TimeRange {
  startTime?: number | undefined
  endTime?: number | undefined
}

/** Binance's weight of a klines request by its limit: [1,100) 1, [100,500) 2, [500,1000] 5, above 10. */
export function klinesWeight(limit: number): number {
  return limit < 100 ? 1 : limit < 500 ? 2 : limit <= 1000 ? 5 : 10
}
