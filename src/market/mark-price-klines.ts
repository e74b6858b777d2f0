import { canonicalQuery } from './upstream-client.js'
import { klinesWeight } from './upstream-requests.js'
import type { MarketData } from './market-data.js'

/** A mark-price kline: Binance's carry no volume (always 0). */
export interface MarkPriceBar {
  openTime: number
  open: number
  high: number
  low: number
  close: number
  volume: number
}

/**
 * GET /fapi/v1/markPriceKlines (weighed as klines by limit): the mark-price bars with open times in
 * [startTime, endTime], oldest first, parsed at the edge. Binance has no mark-price kline stream for USD-M
 * futures, only `<symbol>@markPrice@1s` ticks; these bars are the ones backtests read (the archive's
 * markPriceKlines are the same), so a dry run that reads them here examines the same prices.
 */
export async function markPriceKlines(market: MarketData, symbol: string, interval: string, startTime: number, endTime: number, limit: number): Promise<MarkPriceBar[]> {
  const query = canonicalQuery({ symbol, interval, startTime, endTime, limit })
  const response = await market.client.get({ host: 'api', path: '/fapi/v1/markPriceKlines', query, weight: klinesWeight(limit) }, performance.now() + 5_000)
  if (response.status !== 200) throw new Error(`the exchange refused /fapi/v1/markPriceKlines for ${symbol}: ${response.status} ${response.body.slice(0, 200)}`)
  const rows = JSON.parse(response.body) as unknown
  if (!Array.isArray(rows) || !rows.every((row) => Array.isArray(row) && row.length >= 5)) throw new Error(`the exchange sent an unexpected markPriceKlines payload for ${symbol}`)
  return (rows as unknown[][]).map((k) => ({ openTime: Number(k[0]), open: Number(k[1]), high: Number(k[2]), low: Number(k[3]), close: Number(k[4]), volume: 0 }))
}
