import crypto from 'node:crypto'

/** Binance's default and our recvWindow: how long after `timestamp` the exchange may still accept the request. */
export const RECV_WINDOW_MS = 5000

/**
 * Binance's SIGNED request signature: lowercase hex HMAC-SHA256 keyed by the API secret over
 * totalParams, the exact query string followed by the exact request body (the GET calls here have none).
 */
export function binanceSignature(secret: string, totalParams: string): string {
  return crypto.createHmac('sha256', secret).update(totalParams).digest('hex')
}

/**
 * The query string of a SIGNED request: `params` in the order given, then recvWindow and timestamp,
 * then `signature` over everything before it (signed exactly as sent, so no re-encoding can differ).
 */
export function signedQuery(secret: string, params: Record<string, string | number>, timestamp: number, recvWindow = RECV_WINDOW_MS): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) search.append(name, String(value))
  search.append('recvWindow', String(recvWindow))
  search.append('timestamp', String(timestamp))
  const query = search.toString()
  return `${query}&signature=${binanceSignature(secret, query)}`
}
