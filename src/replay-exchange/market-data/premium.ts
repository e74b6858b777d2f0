import { nextFunding } from './funding.js'
import type { MarketSymbol } from './market-symbol.js'
import { priceAt } from './prices.js'
import { unit } from '../common/seeded.js'

/** A /fapi/v1/premiumIndex row. */
export interface PremiumIndexRow {
  symbol: string
  markPrice: string
  indexPrice: string
  estimatedSettlePrice: string
  lastFundingRate: string
  interestRate: string
  nextFundingTime: number
  time: number
}

export interface MarkPrice {
  mark: number
  index: number
  estimatedSettle: number
  fundingRate: number
  nextFundingTime: number
}

/** The mark's seeded deviation from the path price: at most ±0.01 % (a trigger on the mark can look this far past the path). */
export const MARK_NOISE = 0.0001

/**
 * Derived mark and index prices at replay `now`. The mark is the path price with ±0.01% seeded
 * noise per second (Binance's mark moves once a second); the index sits below the mark by the
 * premium the funding rate implies ((rate − 0.01%) × 0.8, capped at ±0.3%). The rate is the
 * recorded funding that settles next, so /fundingRate shows the same rate once it has settled.
 */
export function markPrice(symbol: MarketSymbol, now: number): MarkPrice | undefined {
  const price = priceAt(symbol, now)
  if (price === undefined) return undefined
  const funding = nextFunding(symbol, now)
  const second = Math.floor(now / 1000)
  const mark = price * (1 + 2 * MARK_NOISE * (unit(symbol.seed, second, 7) - 0.5))
  const premium = premiumOf(funding.rate)
  const index = mark / (1 + premium)
  const estimatedSettle = index * (1 + 0.0004 * (unit(symbol.seed, Math.floor(now / 60_000), 8) - 0.5))
  return { mark, index, estimatedSettle, fundingRate: funding.rate, nextFundingTime: funding.time }
}

/** The premium (mark − index) / index that a funding rate implies: (rate − 0.01%) × 0.8, capped at ±0.3%. */
export function premiumOf(fundingRate: number): number {
  return Math.min(0.003, Math.max(-0.003, (fundingRate - 0.0001) * 0.8))
}

export function premiumIndexRow(symbol: MarketSymbol, now: number): PremiumIndexRow | undefined {
  const m = markPrice(symbol, now)
  if (!m) return undefined
  return {
    symbol: symbol.info.symbol,
    markPrice: m.mark.toFixed(8),
    indexPrice: m.index.toFixed(8),
    estimatedSettlePrice: m.estimatedSettle.toFixed(8),
    lastFundingRate: m.fundingRate.toFixed(8),
    interestRate: symbol.snapshot?.interestRate ?? '0.00010000',
    nextFundingTime: m.nextFundingTime,
    time: now,
  }
}
