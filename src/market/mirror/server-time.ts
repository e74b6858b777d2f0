import type { MarketSession } from '../market-data.js'
import type { CachedResponse } from '../response-cache.js'
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
  return { status: 200, body: Buffer.from(`{"serverTime":${heldTime(entry) + Math.max(0, now - entry.storedAt)}}`) }
}

/** The exchange's clock now, read forward by ours from the held answer; 502 when the exchange refuses. */
export async function exchangeNow(market: MarketSession, now: number): Promise<number> {
  const entry = await market.fetch(upstream.time())
  if (entry.status !== 200) throw unavailable(`the upstream exchange refused /fapi/v1/time (${entry.status})`)
  return heldTime(entry) + Math.max(0, now - entry.storedAt)
}

function heldTime(entry: CachedResponse): number {
  return entry.derive('serverTime', () => {
    const value = (okJson(entry) as { serverTime?: unknown } | null)?.serverTime
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw unavailable('the upstream exchange sent an unexpected time payload')
    return value
  })
}
