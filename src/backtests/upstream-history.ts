import { setTimeout as sleep } from 'node:timers/promises'
import type { SymbolRules } from '../engine/index.js'
import { AppError } from '../http/errors.js'
import { symbolDirectory } from '../market/exchange-info.js'
import { unlistedSymbol } from '../market/closest-symbol.js'
import { bracketsFor } from '../market/leverage-brackets.js'
import type { MarketData } from '../market/market-data.js'
import { canonicalQuery, isUpstreamUnavailable } from '../market/upstream-client.js'
import { klinesWeight } from '../market/upstream-requests.js'
import type { FundingRow, HistorySource, KlineRow } from './history-store.js'

/** A history page may wait this long for the upstream weight budget before the job fails. */
const MAX_WAIT_MS = 5 * 60_000
const PAGE_DEADLINE_MS = 15_000

/**
 * History for backtests straight from the upstream client: pages are large and asked once, so they
 * skip the market cache. A spent weight budget or a 429 is waited out (the client's Retry-After),
 * never hammered; other failures fail the job.
 */
export class UpstreamHistory implements HistorySource {
  constructor(
    private readonly market: MarketData,
    private readonly isCancelled: () => boolean = () => false,
  ) {}

  klines(symbol: string, interval: string, startTime: number, endTime: number, limit: number): Promise<KlineRow[]> {
    return this.klineRows('/fapi/v1/klines', symbol, interval, startTime, endTime, limit)
  }

  /** Mark-price klines: the kline row's shape, volume, quote volume and taker fields 0, `trades` the mark's samples. Weighed as klines. */
  markPriceKlines(symbol: string, interval: string, startTime: number, endTime: number, limit: number): Promise<KlineRow[]> {
    return this.klineRows('/fapi/v1/markPriceKlines', symbol, interval, startTime, endTime, limit)
  }

  private async klineRows(path: string, symbol: string, interval: string, startTime: number, endTime: number, limit: number): Promise<KlineRow[]> {
    const rows = await this.page<unknown[][]>(path, { symbol, interval, startTime, endTime, limit }, klinesWeight(limit))
    return rows.map((k) => ({
      openTime: Number(k[0]),
      open: Number(k[1]),
      high: Number(k[2]),
      low: Number(k[3]),
      close: Number(k[4]),
      volume: Number(k[5]),
      quoteVolume: Number(k[7]),
      trades: Number(k[8]),
    }))
  }

  async fundingRates(symbol: string, startTime: number, endTime: number, limit: number): Promise<FundingRow[]> {
    const rows = await this.page<{ fundingTime: number; fundingRate: string; markPrice?: string }[]>('/fapi/v1/fundingRate', { symbol, startTime, endTime, limit }, 1)
    return rows.map((r) => ({
      fundingTime: Number(r.fundingTime),
      fundingRate: Number(r.fundingRate),
      markPrice: r.markPrice !== undefined && r.markPrice !== '' && Number(r.markPrice) > 0 ? Number(r.markPrice) : null,
    }))
  }

  private async page<T>(path: string, query: Record<string, string | number>, weight: number): Promise<T> {
    const giveUpAt = Date.now() + MAX_WAIT_MS
    for (;;) {
      if (this.isCancelled()) throw new AppError('INVALID_STATE', 'the job was cancelled')
      try {
        const response = await this.market.client.get({ host: 'api', path, query: canonicalQuery(query), weight }, performance.now() + PAGE_DEADLINE_MS)
        if (response.status !== 200) {
          throw new AppError('INVALID_PARAMETER', `the exchange refused ${path} for ${query.symbol}: ${response.body.slice(0, 200)}`)
        }
        return JSON.parse(response.body) as T
      } catch (error) {
        const retryAfter = isUpstreamUnavailable(error) ? Number(error.headers['retry-after']) : Number.NaN
        if (!Number.isFinite(retryAfter) || Date.now() + retryAfter * 1000 > giveUpAt) throw error
        await sleep(Math.max(250, retryAfter * 1000))
      }
    }
  }
}

/**
 * The engine's rules for a symbol from the exchange's filters. Maintenance brackets: the symbol's own
 * tiers from the dated leverageBracket snapshot (the BTCUSDT sample for a symbol it lacks); a live run
 * replaces them with its account's own answer.
 */
export async function symbolRules(market: MarketData, symbol: string): Promise<SymbolRules> {
  const listed = (await symbolDirectory(market.session())).symbols
  const record = listed.get(symbol)
  if (!record) throw unlistedSymbol('symbols', symbol, listed.keys())
  const filter = <T extends string>(type: T) => record.filters.find((f) => f.filterType === type) as Record<string, string> | undefined
  const lot = filter('MARKET_LOT_SIZE') ?? filter('LOT_SIZE')
  return {
    stepSize: Number(lot?.stepSize ?? 0),
    minQty: Number(lot?.minQty ?? 0),
    minNotional: Number(filter('MIN_NOTIONAL')?.minNotional ?? 0),
    tickSize: Number(filter('PRICE_FILTER')?.tickSize ?? 0),
    brackets: bracketsFor(symbol).brackets,
  }
}
