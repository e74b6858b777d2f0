import crypto from 'node:crypto'

/** How far a signed request's timestamp may be from the server clock (DESIGN §5). */
export const SIGNATURE_TOLERANCE_MS = 5000

/**
 * The request signature of DESIGN §5: lowercase hex HMAC-SHA256(secret, timestamp + METHOD +
 * path_with_query + raw_body), with path_with_query exactly as sent and raw_body the exact bytes.
 */
export function signRequest(secret: string, timestamp: string, method: string, pathWithQuery: string, body: Buffer | string = ''): string {
  return crypto
    .createHmac('sha256', secret)
    .update(timestamp)
    .update(method.toUpperCase())
    .update(pathWithQuery)
    .update(body)
    .digest('hex')
}

/** Constant-time comparison of a presented signature with the expected one. */
export function signaturesMatch(expectedHex: string, presented: string): boolean {
  if (!/^[0-9a-f]{64}$/.test(presented)) return false
  return crypto.timingSafeEqual(Buffer.from(expectedHex, 'hex'), Buffer.from(presented, 'hex'))
}
