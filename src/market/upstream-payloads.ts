import { AppError } from '../http/errors.js'
import type { CachedResponse } from './response-cache.js'
import type { AccountRatioRow, FundingHistoryRow, PositionRatioRow, PremiumFundingRow, TickerRow } from './schemas.js'
import { unavailable } from './upstream-client.js'

/**
 * The edge where Binance's payloads become our types. Each parser runs once per cached answer
 * (CachedResponse.derive). A payload of the wrong shape is the upstream failing: 502.
 */

type Json = Record<string, unknown>

/** Binance's code for an unknown symbol ("Invalid symbol."). */
const INVALID_SYMBOL = -1121

/** The JSON of a 200 answer; an unknown-symbol refusal becomes UNKNOWN_SYMBOL, anything else a 502. */
export function okJson(entry: CachedResponse, symbol?: string): unknown {
  if (entry.status === 200) return entry.derive('json', () => parseJson(entry.body))
  if (entry.status === 400 && symbol !== undefined) {
    const refusal = entry.derive('json', () => parseJson(entry.body)) as { code?: unknown }
    if (refusal?.code === INVALID_SYMBOL) throw unknownSymbol(symbol)
  }
  throw unavailable(`the upstream exchange refused the request (${entry.status})`)
}

export function unknownSymbol(symbol: string): AppError {
  return new AppError('UNKNOWN_SYMBOL', `unknown symbol ${symbol}`, { field: 'symbol' })
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body)
  } catch {
    return undefined
  }
}

function malformed(what: string): AppError {
  return unavailable(`the upstream exchange sent an unexpected ${what} payload`)
}

/** `parse` over each row of an array payload. */
function rows<T>(value: unknown, what: string, parse: (row: Json) => T): T[] {
  if (!Array.isArray(value)) throw malformed(what)
  return value.map((row) => {
    if (typeof row !== 'object' || row === null) throw malformed(what)
    return parse(row as Json)
  })
}

export function text(row: Json, field: string, what: string): string {
  const value = row[field]
  if (typeof value === 'string') return value
  if (typeof value === 'number' && Number.isFinite(value)) return String(value)
  throw malformed(what)
}

export function integer(row: Json, field: string, what: string): number {
  const value = typeof row[field] === 'string' ? Number(row[field]) : row[field]
  if (typeof value === 'number' && Number.isSafeInteger(value)) return value
  throw malformed(what)
}

export function parseTickers(entry: CachedResponse): TickerRow[] {
  return entry.derive('tickers', () =>
    rows(okJson(entry), 'ticker', (row) => ({
      symbol: text(row, 'symbol', 'ticker'),
      priceChange: text(row, 'priceChange', 'ticker'),
      priceChangePercent: text(row, 'priceChangePercent', 'ticker'),
      weightedAvgPrice: text(row, 'weightedAvgPrice', 'ticker'),
      lastPrice: text(row, 'lastPrice', 'ticker'),
      lastQty: text(row, 'lastQty', 'ticker'),
      openPrice: text(row, 'openPrice', 'ticker'),
      highPrice: text(row, 'highPrice', 'ticker'),
      lowPrice: text(row, 'lowPrice', 'ticker'),
      volume: text(row, 'volume', 'ticker'),
      quoteVolume: text(row, 'quoteVolume', 'ticker'),
      openTime: integer(row, 'openTime', 'ticker'),
      closeTime: integer(row, 'closeTime', 'ticker'),
      firstId: integer(row, 'firstId', 'ticker'),
      lastId: integer(row, 'lastId', 'ticker'),
      count: integer(row, 'count', 'ticker'),
    })),
  )
}

/** Current funding of perpetual contracts; delivery contracts (empty lastFundingRate) have none and are left out. */
export function parseFundingRates(entry: CachedResponse): PremiumFundingRow[] {
  return entry.derive('fundingRates', () =>
    rows(okJson(entry), 'premium index', (row) => row)
      .filter((row) => row.lastFundingRate !== '' && row.lastFundingRate !== undefined)
      .map((row) => ({
        symbol: text(row, 'symbol', 'premium index'),
        fundingRate: text(row, 'lastFundingRate', 'premium index'),
        markPrice: text(row, 'markPrice', 'premium index'),
        indexPrice: text(row, 'indexPrice', 'premium index'),
        interestRate: text(row, 'interestRate', 'premium index'),
        nextFundingTime: integer(row, 'nextFundingTime', 'premium index'),
        time: integer(row, 'time', 'premium index'),
      })),
  )
}

export function parseFundingHistory(entry: CachedResponse, symbol: string): FundingHistoryRow[] {
  return entry.derive('fundingHistory', () =>
    rows(okJson(entry, symbol), 'funding history', (row) => ({
      symbol: text(row, 'symbol', 'funding history'),
      fundingTime: integer(row, 'fundingTime', 'funding history'),
      fundingRate: text(row, 'fundingRate', 'funding history'),
      markPrice: typeof row.markPrice === 'string' || typeof row.markPrice === 'number' ? String(row.markPrice) : '',
    })),
  )
}

/** Binance names the position shares longAccount/shortAccount on USD-M (longPosition on COIN-M); either is read. */
export function parsePositionRatios(entry: CachedResponse, symbol: string): PositionRatioRow[] {
  return entry.derive('positionRatios', () =>
    rows(okJson(entry, symbol), 'position ratio', (row) => ({
      symbol: text(row, 'symbol', 'position ratio'),
      longShortRatio: text(row, 'longShortRatio', 'position ratio'),
      longPosition: text(row, row.longPosition !== undefined ? 'longPosition' : 'longAccount', 'position ratio'),
      shortPosition: text(row, row.shortPosition !== undefined ? 'shortPosition' : 'shortAccount', 'position ratio'),
      timestamp: integer(row, 'timestamp', 'position ratio'),
    })),
  )
}

export function parseAccountRatios(entry: CachedResponse, symbol: string): AccountRatioRow[] {
  return entry.derive('accountRatios', () =>
    rows(okJson(entry, symbol), 'account ratio', (row) => ({
      symbol: text(row, 'symbol', 'account ratio'),
      longShortRatio: text(row, 'longShortRatio', 'account ratio'),
      longAccount: text(row, 'longAccount', 'account ratio'),
      shortAccount: text(row, 'shortAccount', 'account ratio'),
      timestamp: integer(row, 'timestamp', 'account ratio'),
    })),
  )
}

export interface TakerVolumePoint {
  buyVolume: number
  sellVolume: number
  timestamp: number
}

export function parseTakerVolumes(entry: CachedResponse, symbol: string): TakerVolumePoint[] {
  return entry.derive('takerVolumes', () =>
    rows(okJson(entry, symbol), 'taker volume', (row) => ({
      buyVolume: Number(text(row, 'buyVol', 'taker volume')),
      sellVolume: Number(text(row, 'sellVol', 'taker volume')),
      timestamp: integer(row, 'timestamp', 'taker volume'),
    })),
  )
}

export interface OpenInterestPoint {
  /** Base-asset contracts open. */
  openInterest: number
  /** Their value in the quote asset. */
  openInterestValue: number
  timestamp: number
}

export function parseOpenInterest(entry: CachedResponse, symbol: string): OpenInterestPoint[] {
  return entry.derive('openInterest', () =>
    rows(okJson(entry, symbol), 'open interest', (row) => ({
      openInterest: Number(text(row, 'sumOpenInterest', 'open interest')),
      openInterestValue: Number(text(row, 'sumOpenInterestValue', 'open interest')),
      timestamp: integer(row, 'timestamp', 'open interest'),
    })),
  )
}

export interface TradePoint {
  id: number
  price: string
  qty: string
  quoteQty: string
  time: number
  isBuyerMaker: boolean
}

/** Recent trades, most recent first (Binance sends them oldest first). */
export function parseTradesNewestFirst(entry: CachedResponse, symbol: string): TradePoint[] {
  return entry.derive('tradesNewestFirst', () =>
    rows(okJson(entry, symbol), 'trades', (row) => {
      if (typeof row.isBuyerMaker !== 'boolean') throw malformed('trades')
      return {
        id: integer(row, 'id', 'trades'),
        price: text(row, 'price', 'trades'),
        qty: text(row, 'qty', 'trades'),
        quoteQty: text(row, 'quoteQty', 'trades'),
        time: integer(row, 'time', 'trades'),
        isBuyerMaker: row.isBuyerMaker,
      }
    }).reverse(),
  )
}
