import { AppError } from '../http/errors.js'
import { andThenBoth, type Soon } from '../http/soon.js'
import { assertKnownSymbol } from './exchange-info.js'
import type { MarketSession } from './market-data.js'
import type { CachedResponse } from './response-cache.js'
import type { FundingHistoryQuery, FundingHistoryRow, FundingRate, PremiumFundingRow } from './schemas.js'
import { fixed } from './numbers.js'
import { okJson, parseFundingHistory, parseFundingRates } from './upstream-payloads.js'
import { upstream } from './upstream-requests.js'

/**
 * GET /funding/rates as encoded JSON: rendered once per pair of upstream answers (premium index and
 * funding info), the hot path of the gateway. A Buffer rather than a string: encoding the 80 KB answer
 * on every response cost a third of its throughput.
 */
export function fundingRatesJson(market: MarketSession): Soon<Buffer> {
  return andThenBoth(market.fetch(upstream.premiumIndex()), fundingIntervals(market), (entry, intervals) =>
    entry.derive(`fundingRatesJson ${intervals.version}`, () => Buffer.from(JSON.stringify(withIntervals(parseFundingRates(entry), intervals.hours)))),
  )
}

/** GET /funding/rates/{symbol}: the symbol's row of the same all-symbols answer (one upstream call serves every symbol). */
export async function fundingRate(market: MarketSession, symbol: string): Promise<FundingRate> {
  const [entry, intervals] = await Promise.all([market.fetch(upstream.premiumIndex()), fundingIntervals(market)])
  const bySymbol = entry.derive(`fundingRatesBySymbol ${intervals.version}`, () => new Map(withIntervals(parseFundingRates(entry), intervals.hours).map((row) => [row.symbol, row])))
  const row = bySymbol.get(symbol)
  if (row) return row
  await assertKnownSymbol(market, symbol)
  throw new AppError('NOT_FOUND', `${symbol} has no funding rate (not a perpetual contract)`)
}

/** Binance's funding interval for every symbol fundingInfo does not list. */
const DEFAULT_INTERVAL_HOURS = 8
const HOURS_PER_YEAR = 365 * 24

interface FundingIntervals {
  /** Hours per funding period of the symbols that differ from the default; undefined: unknown (fundingInfo failed). */
  hours: Map<string, number> | undefined
  /** Names the answer the rows were combined with, so each combination is rendered once. */
  version: string
}

/**
 * Each symbol's own funding interval, from /fapi/v1/fundingInfo (Binance lists the symbols whose
 * interval, cap or floor was adjusted; 4-hour and 1-hour symbols are there). When it cannot be read,
 * the rates are still served, with the interval and annualised rate null rather than a guess.
 */
function fundingIntervals(market: MarketSession): Soon<FundingIntervals> {
  const entry = market.fetch(upstream.fundingInfo())
  return entry instanceof Promise ? entry.then(intervalsOf, () => NO_INTERVALS) : intervalsOf(entry)
}

const NO_INTERVALS: FundingIntervals = { hours: undefined, version: 'none' }

function intervalsOf(entry: CachedResponse): FundingIntervals {
  try {
    const hours = entry.derive('fundingIntervalHours', () => {
      const map = new Map<string, number>()
      const payload = okJson(entry)
      for (const row of Array.isArray(payload) ? (payload as Record<string, unknown>[]) : []) {
        const value = Number(row?.fundingIntervalHours)
        if (typeof row?.symbol === 'string' && Number.isInteger(value) && value > 0 && value <= 24) map.set(row.symbol, value)
      }
      return map
    })
    return { hours, version: String(entry.storedAt) }
  } catch {
    return NO_INTERVALS
  }
}

function withIntervals(rows: PremiumFundingRow[], hours: Map<string, number> | undefined): FundingRate[] {
  return rows.map((row) => {
    const interval = hours ? (hours.get(row.symbol) ?? DEFAULT_INTERVAL_HOURS) : null
    const annualized = interval === null ? null : fixed((Number(row.fundingRate) * HOURS_PER_YEAR) / interval, 8)
    return { ...row, fundingIntervalHours: interval, annualizedRate: annualized }
  })
}

/** GET /funding/rates/{symbol}/history: the exchange's funding history, oldest first. */
export async function fundingHistory(market: MarketSession, symbol: string, query: FundingHistoryQuery): Promise<FundingHistoryRow[]> {
  if (query.start_time !== undefined && query.end_time !== undefined && query.start_time > query.end_time) {
    throw new AppError('INVALID_PARAMETER', 'start_time must not be after end_time', { field: 'start_time' })
  }
  await assertKnownSymbol(market, symbol)
  const entry = await market.fetch(
    upstream.fundingHistory({ symbol, startTime: query.start_time, endTime: query.end_time, limit: query.limit ?? 100 }),
  )
  return parseFundingHistory(entry, symbol)
}
