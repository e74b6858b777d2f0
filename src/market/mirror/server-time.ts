import type { MarketSession } from '../market-data.js'
import { okJson } from '../upstream-payloads.js'
import { upstream } from '../upstream-requests.js'
import { unavailable } from '../upstream-client.js'
import { type Forwarded, forwarded } from './forward.js'

/**
 * GET /fapi/v1/time: the exchange's clock, read forward by ours. The answer is held 10 s like any
 * other, but a held serverTime would lag by up to the TTL, and clients use it to fit their
 * timestamps into the exchange's recvWindow; so the time since the answer arrived is added.
 */
export async function serverTime(market: MarketSession, now: number): Promise<Forwarded> {
  const entry = await market.fetch(upstream.time())
  if (entry.status !== 200) return forwarded(entry)
  const time = entry.derive('serverTime', () => {
    const value = (okJson(entry) as { serverTime?: unknown } | null)?.serverTime
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw unavailable('the upstream exchange sent an unexpected time payload')
    return value
  })
  return { status: 200, body: Buffer.from(`{"serverTime":${time + Math.max(0, now - entry.storedAt)}}`) }
}
