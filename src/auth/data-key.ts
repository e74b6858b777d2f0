import type { FastifyRequest } from 'fastify'
import type { Principal } from '../http/access.js'
import { AppError } from '../http/errors.js'
import type { KeyDirectory } from './key-directory.js'
import { lacksScope, type Scope } from './scopes.js'

/**
 * The data key of the plan-gated endpoints (spec Authentication, pattern 2): the `pk_` key id alone in
 * X-Service-API-Key, no signature and no Bearer token. A missing, unknown or revoked key is 401; a key
 * without `scope` is 403 INSUFFICIENT_PERMISSION. The plan is checked later (plans.ts), after the
 * request validated.
 */
export async function authenticateDataKey(request: FastifyRequest, deps: { keys: KeyDirectory; now: () => number }, scope: Scope): Promise<Principal & { keyId: string }> {
  const raw = request.headers['x-service-api-key']
  const keyId = typeof raw === 'string' ? raw.trim() : ''
  if (keyId === '') throw new AppError('UNAUTHENTICATED', 'this endpoint needs your data key (pk_…) in the X-Service-API-Key header')
  // Anything else cannot be one of our keys: refused without a database lookup.
  if (!/^pk_[A-Za-z0-9_-]{1,128}$/.test(keyId)) throw new AppError('UNAUTHENTICATED', 'X-Service-API-Key is not a data key: keys start with pk_')
  const key = await deps.keys.find(keyId, deps.now())
  if (!key) throw new AppError('UNAUTHENTICATED', 'unknown or revoked data key')
  if (!key.scopes.has(scope)) throw new AppError('INSUFFICIENT_PERMISSION', lacksScope(scope))
  return { userId: key.userId, keyId: key.id, scopes: key.scopes }
}
