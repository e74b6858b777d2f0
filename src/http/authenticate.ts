import type { FastifyRequest } from 'fastify'
import type { AppTokens } from '../auth/app-token.js'
import type { KeyDirectory } from '../auth/key-directory.js'
import { signatureBytes, signaturesMatch, SIGNATURE_TOLERANCE_MS } from '../auth/request-signature.js'
import { SCOPES } from '../auth/scopes.js'
import type { Principal } from './access.js'
import { AppError } from './errors.js'
import type { Claim, SharedState } from './shared-state.js'

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
 * Returns null when the request carries no credentials at all; throws 401 for bad ones.
 */
export async function authenticate(request: FastifyRequest, deps: AuthenticateDeps): Promise<Authenticated | null> {
  const authorization = request.headers.authorization
  if (authorization !== undefined) return { principal: await bearer(authorization, deps), replay: undefined }
  const keyId = header(request, 'x-service-api-key')
  const timestamp = header(request, 'x-service-timestamp')
  const signature = header(request, 'x-service-signature')
  if (keyId === undefined && timestamp === undefined && signature === undefined) return null
  if (keyId === undefined || timestamp === undefined || signature === undefined) {
    throw unauthenticated('a signed request needs all three headers X-Service-API-Key, X-Service-Timestamp and X-Service-Signature')
  }
  const now = deps.now()
  if (!/^\d{1,16}$/.test(timestamp)) throw unauthenticated('X-Service-Timestamp must be Unix time in milliseconds')
  if (Math.abs(now - Number(timestamp)) > SIGNATURE_TOLERANCE_MS) {
    throw new AppError('TIMESTAMP_EXPIRED', `X-Service-Timestamp is more than ${SIGNATURE_TOLERANCE_MS} ms from server time ${now}`)
  }
  const key = await deps.keys.find(keyId, now)
  if (!key) throw unauthenticated('unknown or revoked API key')
  const expected = signatureBytes(key.signingKey, timestamp, request.method, request.url, request.rawBody ?? '')
  if (!signaturesMatch(expected, signature)) {
    throw new AppError(
      'INVALID_SIGNATURE',
      'signature does not match: expected lowercase hex HMAC-SHA256(secret, timestamp + METHOD + path_with_query + raw_body)',
    )
  }
  // Claimed (by the caller) only after the signature verified, so nobody can burn another key's future
  // signatures. The key is the presented signature in lowercase: it matched, so it is the expected one's hex.
  return { principal: { userId: key.userId, keyId: key.id, scopes: key.scopes }, replay: { key: `sig:${signature.toLowerCase()}`, ttlMs: 2 * SIGNATURE_TOLERANCE_MS } }
}

/** The refusal of a signature already claimed. */
export function replayedSignature(): AppError {
  return new AppError('INVALID_SIGNATURE', 'this signature was already used: sign every request afresh')
}

async function bearer(authorization: string, deps: AuthenticateDeps): Promise<Principal> {
  const match = /^Bearer\s+(\S+)$/i.exec(authorization)
  if (!match?.[1]) throw unauthenticated('Authorization must be "Bearer <app token>"')
  const userId = await deps.tokens.verify(match[1], deps.now())
  if (userId === undefined) throw unauthenticated('the app token is invalid or expired')
  return { userId, keyId: null, scopes: ALL_SCOPES }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return typeof value === 'string' && value !== '' ? value : undefined
}

function unauthenticated(message: string): AppError {
  return new AppError('UNAUTHENTICATED', message)
}
