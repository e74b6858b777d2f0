import crypto from 'node:crypto'

/** How far a signed request's timestamp may be from the server clock (DESIGN §5). */
export const SIGNATURE_TOLERANCE_MS = 5000

/**
 * The request signature of DESIGN §5: lowercase hex HMAC-SHA256(secret, timestamp + METHOD +
 * path_with_query + raw_body), with path_with_query exactly as sent and raw_body the exact bytes.
 */
export function signRequest(secret: string | crypto.KeyObject, timestamp: string, method: string, pathWithQuery: string, body: Buffer | string = ''): string {
  return signatureBytes(secret, timestamp, method, pathWithQuery, body).toString('hex')
}

/**
 * The signature as its 32 bytes. The server keeps each key's secret as a KeyObject (createHmac
 * prepares a string secret again on every call) and hashes the head as one string: timestamp and
 * method are ASCII, so its UTF-8 bytes are those of the parts in a row.
 */
export function signatureBytes(secret: string | crypto.KeyObject, timestamp: string, method: string, pathWithQuery: string, body: Buffer | string = ''): Buffer {
  const hmac = crypto.createHmac('sha256', secret).update(timestamp + method.toUpperCase() + pathWithQuery)
  if (body.length > 0) hmac.update(body)
  return hmac.digest()
}

/** The secret of a key as the server keeps it for signatureBytes. */
export function signingKey(secret: string): crypto.KeyObject {
  return crypto.createSecretKey(Buffer.from(secret, 'utf8'))
}

/**
 * Constant-time comparison of a presented signature (64 hex digits, either case) with the expected
 * bytes. A string of another length, or with a non-hex digit (Buffer.from stops decoding there, so
 * fewer than 32 bytes come out), never matches.
 */
export function signaturesMatch(expected: Buffer, presented: string): boolean {
  if (presented.length !== 64) return false
  const bytes = Buffer.from(presented, 'hex')
  return bytes.length === 32 && crypto.timingSafeEqual(expected, bytes)
}
