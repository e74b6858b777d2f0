import crypto from 'node:crypto'

/** A webhook secret: 30 random bytes as 40 base64url characters, shown once at create. */
export function newWebhookSecret(): string {
  return crypto.randomBytes(30).toString('base64url')
}

export interface SignatureHeaders {
  'webhook-id': string
  'webhook-timestamp': string
  'webhook-signature': string
}

/**
 * The Standard Webhooks headers of one delivery (DESIGN §5): the signature is the base64
 * HMAC-SHA256, keyed by the base64url-decoded secret, of `id.timestamp.body`.
 */
export function signatureHeaders(secret: string, eventId: string, timestampSeconds: number, body: string): SignatureHeaders {
  const timestamp = String(timestampSeconds)
  const mac = crypto.createHmac('sha256', Buffer.from(secret, 'base64url')).update(`${eventId}.${timestamp}.${body}`).digest('base64')
  return { 'webhook-id': eventId, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${mac}` }
}
