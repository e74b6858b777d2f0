import { signRequest } from '../../src/auth/request-signature.js'

export interface KeyPair {
  api_key: string
  api_secret: string
}

/** The three signing headers for one request, as a client following the README computes them. */
export function signedHeaders(key: KeyPair, method: string, url: string, body: string | Buffer = '', timestamp = Date.now()): Record<string, string> {
  const ts = String(timestamp)
  return {
    'x-service-api-key': key.api_key,
    'x-service-timestamp': ts,
    'x-service-signature': signRequest(key.api_secret, ts, method, url, body),
  }
}
