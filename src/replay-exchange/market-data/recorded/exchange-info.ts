import path from 'node:path'
import { type MaintenanceBracket, parseLeverageBrackets } from '../../../binance-formats/leverage-brackets.js'
import { loadJson } from './recorded.js'

/** The parts of an exchangeInfo symbol the replay needs for formatting and derivation. */
export interface SymbolInfo {
  symbol: string
  status: string
  contractType: string
  baseAsset: string
  quoteAsset: string
  pricePrecision: number
  quantityPrecision: number
  tickSize: number
  stepSize: number
  onboardDate: number
  /** The largest |mark − last| / mark at which a `priceProtect` conditional order still triggers (exchangeInfo `triggerProtect`, BTCUSDT 0.05). */
  triggerProtect: number
  /** The order filters the trading wing checks (PRICE_FILTER, LOT_SIZE, MARKET_LOT_SIZE, MIN_NOTIONAL). */
  filters: OrderFilters
}

export interface OrderFilters {
  minPrice: number
  maxPrice: number
  minQty: number
  maxQty: number
  marketMinQty: number
  marketMaxQty: number
  minNotional: number
  /** MIN_NOTIONAL as the snapshot writes it ("100", "5"), for Binance's -4164 message. */
  minNotionalText: string
}

export interface ExchangeInfoSnapshot {
  symbols: Map<string, SymbolInfo>
  serverTime: number
  /** The snapshot as served, with serverTime set per response. */
  render(serverTime: number): string
}

/** Binance's USD-M limit, which the replay enforces (the 2025-12 snapshot lists 6000). */
export const WEIGHT_LIMIT_PER_MINUTE = 2400

interface RawFilter {
  filterType: string
  tickSize?: string
  stepSize?: string
  minPrice?: string
  maxPrice?: string
  minQty?: string
  maxQty?: string
  notional?: string
}
interface RawSymbol {
  symbol: string
  status: string
  contractType: string
  baseAsset: string
  quoteAsset: string
  pricePrecision: number
  quantityPrecision: number
  onboardDate: number
  triggerProtect?: string
  filters: RawFilter[]
}
interface RawExchangeInfo {
  serverTime: number
  rateLimits: { rateLimitType: string; interval: string; intervalNum: number; limit: number }[]
  symbols: RawSymbol[]
}

function orderFilters(filter: (type: string) => RawFilter | undefined): OrderFilters {
  const num = (value: string | undefined, fallback: number) => (value === undefined || Number.isNaN(Number(value)) ? fallback : Number(value))
  const lot = filter('LOT_SIZE')
  const market = filter('MARKET_LOT_SIZE') ?? lot
  const notional = filter('MIN_NOTIONAL')?.notional
  return {
    minPrice: num(filter('PRICE_FILTER')?.minPrice, 0),
    maxPrice: num(filter('PRICE_FILTER')?.maxPrice, Number.POSITIVE_INFINITY),
    minQty: num(lot?.minQty, 0),
    maxQty: num(lot?.maxQty, Number.POSITIVE_INFINITY),
    marketMinQty: num(market?.minQty, 0),
    marketMaxQty: num(market?.maxQty, Number.POSITIVE_INFINITY),
    minNotional: num(notional, 0),
    minNotionalText: notional ?? '0',
  }
}

export function loadExchangeInfo(file: string): ExchangeInfoSnapshot {
  const raw = loadJson(file) as RawExchangeInfo
  if (!Array.isArray(raw.symbols) || typeof raw.serverTime !== 'number') throw new Error(`${file}: not an exchangeInfo response`)
  const symbols = new Map<string, SymbolInfo>()
  for (const s of raw.symbols) {
    const filter = (type: string) => s.filters.find((f) => f.filterType === type)
    let tickSize = Number(filter('PRICE_FILTER')?.tickSize)
    let stepSize = Number(filter('LOT_SIZE')?.stepSize)
    if (!(tickSize > 0) || !(stepSize > 0)) {
      // Pre-market listings carry tickSize "0"; only trading symbols get market data, and need both.
      if (s.status === 'TRADING') throw new Error(`${file}: ${s.symbol} lacks PRICE_FILTER.tickSize or LOT_SIZE.stepSize`)
      tickSize = tickSize > 0 ? tickSize : 10 ** -s.pricePrecision
      stepSize = stepSize > 0 ? stepSize : 10 ** -s.quantityPrecision
    }
    symbols.set(s.symbol, {
      symbol: s.symbol,
      status: s.status,
      contractType: s.contractType,
      baseAsset: s.baseAsset,
      quoteAsset: s.quoteAsset,
      pricePrecision: s.pricePrecision,
      quantityPrecision: s.quantityPrecision,
      tickSize,
      stepSize,
      onboardDate: s.onboardDate,
      // Binance's usual 5 % where a snapshot row lacks it (older docs: "5% normally").
      triggerProtect: s.triggerProtect !== undefined && Number(s.triggerProtect) > 0 ? Number(s.triggerProtect) : 0.05,
      filters: orderFilters(filter),
    })
  }
  for (const limit of raw.rateLimits) {
    if (limit.rateLimitType === 'REQUEST_WEIGHT' && limit.interval === 'MINUTE' && limit.intervalNum === 1) limit.limit = WEIGHT_LIMIT_PER_MINUTE
  }
  // Serialised once (1.7 MB of JSON takes ~10 ms to stringify); only serverTime changes per response.
  const marker = -424242424242
  const [head, tail] = JSON.stringify({ ...raw, serverTime: marker }).split(String(marker)) as [string, string]
  return { symbols, serverTime: raw.serverTime, render: (serverTime) => `${head}${serverTime}${tail}` }
}

export interface PremiumSnapshotEntry {
  markPrice: number
  interestRate: string
  lastFundingRate: number
  nextFundingTime: number
  /**
   * The symbol's funding interval as the snapshot shows it: the first grid of 1, 2, 4 or 8 hours whose
   * next time after the snapshot is its nextFundingTime (at 08:38, 09:00 is hourly, 12:00 four-hourly,
   * 16:00 eight-hourly; the interestRate agrees: 0.01 % per 8 h, pro rata). undefined for contracts
   * without funding (nextFundingTime 0).
   */
  fundingIntervalHours: number | undefined
}

const FUNDING_GRIDS_HOURS = [1, 2, 4, 8]
const HOUR_MS = 3_600_000

function fundingIntervalHours(time: number, nextFundingTime: number): number | undefined {
  if (!(nextFundingTime > time)) return undefined
  return FUNDING_GRIDS_HOURS.find((hours) => Math.floor(time / (hours * HOUR_MS)) * hours * HOUR_MS + hours * HOUR_MS === nextFundingTime)
}

export interface PremiumSnapshot {
  time: number
  entries: Map<string, PremiumSnapshotEntry>
}

/** A recorded all-symbol /fapi/v1/premiumIndex response: anchors prices and one funding period of unrecorded symbols. */
export function loadPremiumSnapshot(file: string): PremiumSnapshot {
  const raw = loadJson(file) as { symbol: string; markPrice: string; interestRate: string; lastFundingRate: string; nextFundingTime: number; time: number }[]
  if (!Array.isArray(raw) || raw.length === 0) throw new Error(`${file}: not a premiumIndex response`)
  const entries = new Map<string, PremiumSnapshotEntry>()
  let time = 0
  for (const e of raw) {
    time = Math.max(time, e.time)
    const markPrice = Number(e.markPrice)
    if (!(markPrice > 0)) continue
    entries.set(e.symbol, {
      markPrice,
      interestRate: e.interestRate,
      lastFundingRate: Number(e.lastFundingRate),
      nextFundingTime: e.nextFundingTime,
      fundingIntervalHours: fundingIntervalHours(e.time, e.nextFundingTime),
    })
  }
  return { time, entries }
}

/** A recorded (signed) /fapi/v1/leverageBracket response: every symbol's margin tiers. */
export function loadLeverageBrackets(file: string): Map<string, MaintenanceBracket[]> {
  return parseLeverageBrackets(loadJson(file), path.basename(file))
}
