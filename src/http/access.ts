import type { FastifyRequest } from 'fastify'
import { lacksScope, type Scope } from '../auth/scopes.js'
import { AppError } from './errors.js'
import type { Soon } from './soon.js'

/** How a route is reached; set as `config.access` on every route. */
export type Access =
  /** Operational endpoints (health, metrics, docs): no budget, no credentials. */
  | { kind: 'ops' }
  /** Public, unversioned endpoints: no credentials, per-IP request budget. */
  | { kind: 'public' }
  /**
   * /v1 endpoints: signed (or Bearer) when `signed`, else signing optional; weight charged per key or IP.
   * `bearerOnly`: credential management, for a signed-in user's app token only (auth/keys/signed-in.ts).
   */
  | { kind: 'v1'; signed: boolean; weight: number; scope?: Scope; bearerOnly?: true }
  /**
   * Plan-gated data endpoints (spec Authentication, pattern 2): a `pk_` key in X-Service-API-Key,
   * no signature; 401 without a valid key, 403 without `scope` or an active Standard-or-better plan.
   */
  | { kind: 'data'; weight: number; scope: Scope }

export interface Principal {
  userId: number
  /** The API key that signed the request; null for a Bearer app token. */
  keyId: string | null
  scopes: ReadonlySet<Scope>
  /** The version of the key's secret that signed (KeyDirectory keyVersion), for a stream that outlives the request. */
  keyVersion?: string
  /** When the app token expires (Unix ms), for a stream that outlives the request. */
  expiresAt?: number
}

/**
 * 403 INSUFFICIENT_PERMISSION unless the principal holds `scope`: a route's own scope (app.ts), or one a
 * request needs for what it names (`reason`, e.g. a job's strategy_id, which reads a stored strategy).
 */
export function requireScope(principal: Principal, scope: Scope, reason?: string): void {
  if (principal.scopes.has(scope)) return
  throw new AppError('INSUFFICIENT_PERMISSION', reason ? `${reason}: ${lacksScope(scope)}` : lacksScope(scope))
}

/**
 * Called on a `v1` route once the caller is authenticated and holds the route's scope, before the
 * admission (replay claim + weight charge) is awaited: it may start the route's read so the two round
 * trips overlap. Whatever it starts is for the handler, which runs only after the admission succeeded,
 * so a refused request (401, 403, 429) answers as before and sends nothing of what was read.
 */
export type OnAuthenticated = (request: FastifyRequest, principal: Principal) => void

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access
    onAuthenticated?: OnAuthenticated
  }
  interface FastifyRequest {
    principal: Principal | null
    rawBody: Buffer | undefined
    /**
     * On a `v1` route: charges `weight` more to the budget the route's weight was charged to (429 once it
     * is spent), for a route whose cost is known only once it has read what it will send (sweep returns).
     */
    addWeight: ((weight: number) => Soon<void>) | null
  }
}
