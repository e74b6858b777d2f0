/**
 * Request signing of DESIGN §5 in WebCrypto, so it runs in browsers and Node alike: lowercase hex
 * HMAC-SHA256(secret, timestamp + METHOD + path_with_query + raw_body). The server's check is
 * src/auth/request-signature.ts (node:crypto); test/client/signing.test.ts holds the two equal.
 */
const encoder = new TextEncoder()

/** WebCrypto's types, named through the global so that neither the DOM lib nor node:crypto is needed. */
export type Subtle = typeof globalThis.crypto.subtle
export type HmacKey = Awaited<ReturnType<Subtle['importKey']>>

/** Imports an HMAC-SHA256 key once; sign with it as often as needed. */
export function hmacKey(secret: string | Uint8Array, usage: 'sign' | 'verify' = 'sign'): Promise<HmacKey> {
  // Typed as backed by an ArrayBuffer: the DOM lib's BufferSource refuses a view that might be shared
  // (the dashboard type-checks this file under it).
  const bytes = (typeof secret === 'string' ? encoder.encode(secret) : secret) as Uint8Array<ArrayBuffer>
  return subtle().importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, [usage])
}

/** The X-Service-Signature value for one request. */
export async function signRequest(key: HmacKey, timestamp: string, method: string, pathWithQuery: string, body = ''): Promise<string> {
  const mac = await subtle().sign('HMAC', key, encoder.encode(timestamp + method.toUpperCase() + pathWithQuery + body))
  return toHex(new Uint8Array(mac))
}

function toHex(bytes: Uint8Array): string {
  let text = ''
  for (const byte of bytes) text += byte.toString(16).padStart(2, '0')
  return text
}

/** WebCrypto's subtle API: globalThis.crypto in browsers and Node ≥ 19. */
export function subtle(): Subtle {
  const api = globalThis.crypto?.subtle
  if (!api) throw new Error('WebCrypto (globalThis.crypto.subtle) is not available: use Node 20+ or a browser over https/localhost')
  return api
}
