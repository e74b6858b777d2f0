import type { KeyObject } from 'node:crypto'
import { signingKey, signRequest } from '../../src/auth/request-signature.js'

export interface KeyPair {
  api_key: string
  api_secret: string
}

/**
 * Signs requests for one API key as DESIGN §5 describes. The server refuses a signature it has seen
 * in the last 5 s, and a signature is a function of (key, timestamp, method, path, body), so repeated
 * identical requests need distinct timestamps: they strictly increase per key, even within one
 * millisecond. One signer per connection keeps that ahead of the clock by at most the number of
 * requests a connection completes in one millisecond, far inside the ±5000 ms tolerance.
 */
export class RequestSigner {
  private lastTimestamp = 0
  private readonly secret: KeyObject

  constructor(readonly key: KeyPair) {
    this.secret = signingKey(key.api_secret)
  }

  headers(method: string, pathWithQuery: string, body = ''): Record<string, string> {
    this.lastTimestamp = Math.max(Date.now(), this.lastTimestamp + 1)
    const timestamp = String(this.lastTimestamp)
    return {
      'x-service-api-key': this.key.api_key,
      'x-service-timestamp': timestamp,
      'x-service-signature': signRequest(this.secret, timestamp, method, pathWithQuery, body),
    }
  }
}

/** One signed request with fetch; `body` is sent as exactly this JSON text. Throws unless 2xx. */
export async function signedJson<T>(baseUrl: string, signer: RequestSigner, method: string, pathWithQuery: string, body?: unknown): Promise<T> {
  const payload = body === undefined ? '' : JSON.stringify(body)
  const response = await fetch(`${baseUrl}${pathWithQuery}`, {
    method,
    headers: { ...signer.headers(method, pathWithQuery, payload), ...(payload ? { 'content-type': 'application/json' } : {}) },
    ...(payload ? { body: payload } : {}),
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`${method} ${pathWithQuery} answered ${response.status}: ${text}`)
  return JSON.parse(text) as T
}
