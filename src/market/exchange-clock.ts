import type { MarketData } from './market-data.js'

/**
 * The exchange's clock: GET /fapi/v1/time's serverTime (weight 1). What is closed is the exchange's to say:
 * a kline is final once its close time is before this, whatever our own clock reads (the replay exchange's
 * present is 2025-06-17; Binance's clock and ours differ by our drift).
 */
export async function exchangeServerTime(market: MarketData): Promise<number> {
  const response = await market.client.get({ host: 'api', path: '/fapi/v1/time', query: '', weight: 1 }, performance.now() + 5_000)
  const serverTime = Number((JSON.parse(response.body) as { serverTime?: unknown }).serverTime)
  if (response.status !== 200 || !Number.isFinite(serverTime)) throw new Error(`the exchange did not tell its time (/fapi/v1/time answered ${response.status})`)
  return serverTime
}
