import type { Operation, QueryParams } from './operations.js'
import type { ApiClient } from './api-client.js'

type Query<P extends Parameters<ApiClient['get']>[0]> = QueryParams<Operation<P, 'get'>>

/** Market reads: the /v1 market endpoints (signed when the client has a key) and the public gateway. */
export class MarketApi {
  constructor(private readonly client: ApiClient) {}

  /** Symbols with status, precisions and filters; one symbol when given. */
  exchangeInfo(symbol?: string) {
    return this.client.get('/v1/market/exchange-info', { query: symbol === undefined ? {} : { symbol } })
  }
  /** Recent public trades, most recent first. */
  trades(symbol: string, limit?: number) {
    return this.client.get('/v1/market/trades', { query: { symbol, ...(limit === undefined ? {} : { limit }) } })
  }
  /** Klines of a symbol (plan-gated: needs a data key with an active plan). */
  klines(query: Query<'/v1/market/klines'>) {
    return this.client.get('/v1/market/klines', { query })
  }
  /** The current funding rate of every symbol. */
  fundingRates() {
    return this.client.get('/funding/rates')
  }
  fundingRate(symbol: string) {
    return this.client.get('/funding/rates/{symbol}', { path: { symbol } })
  }
  fundingHistory(symbol: string, query: Query<'/funding/rates/{symbol}/history'> = {}) {
    return this.client.get('/funding/rates/{symbol}/history', { path: { symbol }, query })
  }
  /** 24 h tickers of symbols above a quote volume (default 100 M), largest first. */
  activeTickers(minQuoteVolume?: number) {
    return this.client.get('/ticker/24hr/active', { query: minQuoteVolume === undefined ? {} : { min_quote_volume: minQuoteVolume } })
  }
  /** Where the large holders lean, per symbol, scored by liquidity. */
  whaleBoard(minQuoteVolume?: number) {
    return this.client.get('/whale-board', { query: minQuoteVolume === undefined ? {} : { min_quote_volume: minQuoteVolume } })
  }
  smartMoneyOverview(symbol: string) {
    return this.client.get('/smart-money/signal/overview', { query: { symbol } })
  }
  smartMoneyList(timeRange?: Query<'/smart-money/signal/list'>['timeRange']) {
    return this.client.get('/smart-money/signal/list', { query: timeRange === undefined ? {} : { timeRange } })
  }
  positionRatio(symbol: string, query: Query<'/long-short/position-ratio/{symbol}'> = {}) {
    return this.client.get('/long-short/position-ratio/{symbol}', { path: { symbol }, query })
  }
  accountRatio(symbol: string, query: Query<'/long-short/account-ratio/{symbol}'> = {}) {
    return this.client.get('/long-short/account-ratio/{symbol}', { path: { symbol }, query })
  }
}
