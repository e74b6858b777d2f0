import { hmacKey, subtle } from './signing.js'

/** Standard Webhooks' default: a delivery older or newer than 5 minutes is refused (replays). */
export const WEBHOOK_TOLERANCE_SECONDS = 300

/** The body of a delivery: `{id, type, timestamp, data}` (DESIGN §5). */
export interface WebhookEvent<D = Record<string, unknown>> {
  id: string
  type: string
  timestamp: string
  data: D
}

export interface VerifyOptions {
  /** Seconds a delivery's timestamp may be from now; default 300. */
  toleranceSeconds?: number
  /** The receiver's clock, Unix ms; default Date.now. */
  now?: () => number
}

export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'WebhookVerificationError'
  }
}

/** Request headers as Node (IncomingHttpHeaders), fetch (Headers) or a plain object give them. */
export type HeadersLike = Headers | Record<string, string | string[] | undefined>

const encoder = new TextEncoder()

/**
 * Verifies a webhook delivery as Standard Webhooks specifies, in WebCrypto (Node 20+, browsers, edge
 * runtimes): HMAC-SHA256 keyed by the base64url-decoded secret (a `whsec_` prefix is allowed) over
 * `webhook-id + "." + webhook-timestamp + "." + body`, any `v1,` entry of webhook-signature matching,
 * the timestamp within the tolerance. `body` must be the raw text as received, not re-serialised JSON.
 * Returns the parsed event; throws WebhookVerificationError saying what failed.
 */
export async function verifyWebhook<D = Record<string, unknown>>(secret: string, headers: HeadersLike, body: string | Uint8Array, options: VerifyOptions = {}): Promise<WebhookEvent<D>> {
  const id = header(headers, 'webhook-id')
  const timestamp = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature header')
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not Unix seconds')
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS
  const skew = Math.abs((options.now ?? Date.now)() / 1000 - Number(timestamp))
  if (skew > tolerance) throw new WebhookVerificationError(`webhook-timestamp is ${Math.round(skew)} s from now (tolerance ${tolerance} s)`)
  const text = typeof body === 'string' ? body : new TextDecoder('utf-8', { fatal: true }).decode(body)
  const key = await hmacKey(secretBytes(secret), 'verify')
  const content = encoder.encode(`${id}.${timestamp}.${text}`)
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2)
    if (version !== 'v1' || !value) continue
    const given = base64Bytes(value)
    // subtle.verify compares in constant time.
    if (given && (await subtle().verify('HMAC', key, given as Uint8Array<ArrayBuffer>, content))) return JSON.parse(text) as WebhookEvent<D>
  }
  throw new WebhookVerificationError('no v1 signature matches: wrong secret, or the body was changed')
}

function header(headers: HeadersLike, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const value = (headers as Record<string, string | string[] | undefined>)[name] ?? findCaseInsensitive(headers as Record<string, unknown>, name)
  return Array.isArray(value) ? value.join(' ') : (value as string | undefined)
}

function findCaseInsensitive(headers: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name)
  return key === undefined ? undefined : headers[key]
}

/** The key bytes of a webhook secret: base64url as shown at creation, or standard base64 (same bytes). */
function secretBytes(secret: string): Uint8Array {
  const bytes = base64Bytes(secret.replace(/^whsec_/, ''))
  if (!bytes || bytes.length === 0) throw new WebhookVerificationError('the webhook secret is not base64')
  return bytes
}

function base64Bytes(text: string): Uint8Array | undefined {
  const standard = text.replace(/-/g, '+').replace(/_/g, '/')
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(standard)) return undefined
  const padded = standard + '='.repeat((4 - (standard.length % 4)) % 4)
  try {
    const binary = atob(padded)
    return Uint8Array.from(binary, (c) => c.charCodeAt(0))
  } catch {
    return undefined
  }
}
