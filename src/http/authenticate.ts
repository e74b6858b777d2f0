import crypto from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { AppTokens } from '../auth/app-token.js'
import type { ApiKeyRecord, KeyDirectory } from '../auth/key-directory.js'
import { signatureBytes, signaturesMatch, SIGNATURE_TOLERANCE_MS } from '../auth/request-signature.js'
import { SCOPES } from '../auth/scopes.js'
import type { Principal } from './access.js'
import { AppError } from './errors.js'
import type { Claim, SharedState } from './shared-state.js'
import { andThen, type Soon } from './soon.js'

const ALL_SCOPES = new Set(SCOPES)

export interface AuthenticateDeps {
  keys: KeyDirectory
  tokens: AppTokens
  shared: SharedState
  now: () => number
}

/** Who sent a request, and for a signed one the claim that refuses its signature a second time. */
export interface Authenticated {
  principal: Principal
  /**
   * The signature's replay claim: the caller must make it (SharedState.admit, with the weight charge
   * in the same round trip) before the request has any effect; a failed claim is REPLAYED_SIGNATURE.
   */
  replay: Claim | undefined
}

/**
 * Resolves who sent a request: a Bearer app token, or the three signing headers of DESIGN §5.
 * Returns null when the request carries no credentials at all; throws 401 for bad ones. A signed
 * request whose key is cached is answered at once (soon.ts), and its refusals are thrown, not rejected.
 */
export function authenticate(request: FastifyRequest, deps: AuthenticateDeps): Soon<Authenticated | null> {
  const authorization = request.headers.authorization
  if (authorization !== undefined) return bearer(authorization, deps).then((principal) => ({ principal, replay: undefined }))
  const keyId = header(request, 'x-service-api-key')
  const timestamp = header(request, 'x-service-timestamp')
  const signature = header(request, 'x-service-signature')
  if (keyId === undefined && timestamp === undefined && signature === undefined) return null
  if (keyId === undefined || timestamp === undefined || signature === undefined) {
    throw unauthenticated('a signed request needs all three headers X-Service-API-Key, X-Service-Timestamp and X-Service-Signature')
  }
  const now = deps.now()
  checkTimestamp(timestamp, now)
  return andThen(deps.keys.find(keyId, now), (key) => verified(request, key, timestamp, signature))
}

/** The principal of a request signed with `key`, once its signature matches. */
function verified(request: FastifyRequest, key: ApiKeyRecord | undefined, timestamp: string, signature: string): Authenticated {
  if (!key) throw unauthenticated('unknown or revoked API key')
  const body = request.rawBody ?? ''
  const expected = signatureBytes(key.signingKey, timestamp, request.method, request.url, body)
  if (!signaturesMatch(expected, signature)) throw signatureMismatch(key.signingKey, { timestamp, method: request.method, url: request.url, body }, signature)
  // Claimed (by the caller) only after the signature verified, so nobody can burn another key's future
  // signatures. It is the signature's bytes: they matched, so they are the expected ones.
  return { principal: { userId: key.userId, keyId: key.id, scopes: key.scopes, keyVersion: key.version }, replay: { digest: expected, ttlMs: 2 * SIGNATURE_TOLERANCE_MS } }
}

/**
 * Refuses a timestamp that is not Unix milliseconds within the tolerance, saying which: not digits,
 * seconds or microseconds for the current moment (the usual mistakes: `date +%s`, time.time()), or
 * too far from our clock (how far, and which way).
 */
function checkTimestamp(timestamp: string, now: number): void {
  const shown = timestamp.length <= 20 ? timestamp : `${timestamp.slice(0, 20)}…`
  if (!/^\d{1,16}$/.test(timestamp)) {
    throw unauthenticated(`X-Service-Timestamp must be Unix time in milliseconds, 13 digits such as ${now}; got "${shown}"`)
  }
  const value = Number(timestamp)
  const drift = value - now
  if (Math.abs(drift) <= SIGNATURE_TOLERANCE_MS) return
  const near = (ms: number) => Math.abs(ms - now) <= DAY_MS
  if (near(value * 1000)) {
    throw new AppError('TIMESTAMP_EXPIRED', `X-Service-Timestamp ${timestamp} is in seconds; send Unix time in milliseconds (${value * 1000} for that moment; server time is ${now})`)
  }
  if (near(value / 1000)) {
    throw new AppError('TIMESTAMP_EXPIRED', `X-Service-Timestamp ${timestamp} is in microseconds; send Unix time in milliseconds (${Math.floor(value / 1000)} for that moment; server time is ${now})`)
  }
  const way = drift > 0 ? 'ahead of' : 'behind'
  throw new AppError(
    'TIMESTAMP_EXPIRED',
    `X-Service-Timestamp ${timestamp} is ${Math.abs(drift)} ms ${way} server time ${now}; it must be within ${SIGNATURE_TOLERANCE_MS} ms: sign each request with the current time (and check this machine's clock)`,
  )
}

const DAY_MS = 86_400_000

interface SignedParts {
  timestamp: string
  method: string
  url: string
  body: Buffer | string
}

/**
 * The refusal of a signature that does not match: what the server signed, from this request's own
 * parts (never the secret or the expected signature), and, when the presented signature matches one
 * of the usual slips (query left out, body left out, lowercase method), which. Those few extra
 * HMACs are computed only for a refused request of a known key.
 */
function signatureMismatch(secret: Parameters<typeof signatureBytes>[0], parts: SignedParts, presented: string): AppError {
  const signed = `"${parts.timestamp}" + "${parts.method.toUpperCase()}" + "${parts.url}" + ${parts.body.length === 0 ? 'an empty body' : `the ${parts.body.length}-byte raw body`}`
  const what = `the server signs lowercase hex HMAC-SHA256(api_secret, timestamp + METHOD + path_with_query + raw_body), here ${signed}`
  if (!/^[0-9a-fA-F]{64}$/.test(presented)) {
    return new AppError('INVALID_SIGNATURE', `X-Service-Signature must be 64 hex digits (got ${presented.length} characters); ${what}`)
  }
  const path = parts.url.split('?')[0]!
  const slips: [boolean, string][] = [
    [path !== parts.url, `your signature is that of the path without its query string: sign "${parts.url}" as sent`],
    [parts.body.length > 0, 'your signature is that of an empty body: sign the raw body bytes exactly as sent'],
  ]
  const variants = [
    () => signatureBytes(secret, parts.timestamp, parts.method, path, parts.body),
    () => signatureBytes(secret, parts.timestamp, parts.method, parts.url, ''),
  ]
  const slip = slips.find(([possible], i) => possible && signaturesMatch(variants[i]!(), presented))
  // The method is hashed uppercase whatever the case sent; a lowercase one in the client's string:
  const lowercase = slip === undefined && signaturesMatch(lowercaseMethodSignature(secret, parts), presented)
  const hint = slip ? `; ${slip[1]}` : lowercase ? `; your signature has the method in lowercase: sign "${parts.method.toUpperCase()}"` : ''
  return new AppError('INVALID_SIGNATURE', `signature does not match ${parts.method.toUpperCase()} ${path}: ${what}${hint}`)
}

function lowercaseMethodSignature(secret: Parameters<typeof signatureBytes>[0], parts: SignedParts): Buffer {
  const hmac = crypto.createHmac('sha256', secret).update(parts.timestamp + parts.method.toLowerCase() + parts.url)
  if (parts.body.length > 0) hmac.update(parts.body)
  return hmac.digest()
}

/** The refusal of a signature already claimed. */
export function replayedSignature(): AppError {
  return new AppError('INVALID_SIGNATURE', 'this signature was already used: sign every request afresh')
}

async function bearer(authorization: string, deps: AuthenticateDeps): Promise<Principal> {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization)
  if (!match?.[1]) throw unauthenticated('Authorization must be "Bearer <app token>"')
  const token = await deps.tokens.claims(match[1], deps.now())
  if (token === undefined) throw unauthenticated('the app token is invalid or expired')
  return { userId: token.userId, keyId: null, scopes: ALL_SCOPES, expiresAt: token.expiresAt }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

function unauthenticated(message: string): AppError {
  return new AppError('UNAUTHENTICATED', message)
}
