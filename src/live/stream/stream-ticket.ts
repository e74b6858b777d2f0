import crypto from 'node:crypto'
import type { SecretBox } from '../../auth/secret-box.js'
import type { Principal } from '../../http/access.js'
import { AppError } from '../../http/errors.js'
import type { SharedState } from '../../http/shared-state.js'

/** DESIGN §6: a browser's ticket for ?ticket= is valid 30 s and once. */
export const TICKET_TTL_MS = 30_000

interface TicketBody {
  u: number
  s: string
  e: number
  n: string
  /** The credential that asked for the ticket: an API key id and its secret's version, or an app token's expiry. */
  k?: string
  v?: string
  x?: number
}

/**
 * A sealed (AES-256-GCM under MASTER_KEY) ticket naming user, strategy, expiry and the credential that
 * asked for it: any node can open it without a table, and the nonce is claimed once in the shared state
 * (PostgreSQL with a server), so a ticket opens one stream on one node only. The stream it opens belongs
 * to that credential: it closes when the key is revoked or rotated, or the token expires (issue 37).
 */
export function issueTicket(secrets: SecretBox, asker: Principal, strategyId: string, now: number): { ticket: string; expires_at: string } {
  const body: TicketBody = { u: asker.userId, s: strategyId, e: now + TICKET_TTL_MS, n: crypto.randomBytes(12).toString('hex') }
  if (asker.keyId !== null) Object.assign(body, { k: asker.keyId, v: asker.keyVersion })
  else body.x = asker.expiresAt
  return { ticket: secrets.seal(JSON.stringify(body)), expires_at: new Date(body.e).toISOString() }
}

/** Who a ticket admits to this strategy's stream (the credential that asked for it), using it up; 401 for anything else. */
export async function redeemTicket(secrets: SecretBox, shared: SharedState, ticket: string, strategyId: string, now: number): Promise<Principal> {
  let body: TicketBody
  try {
    body = JSON.parse(secrets.open(ticket)) as TicketBody
  } catch {
    throw new AppError('UNAUTHENTICATED', 'the stream ticket is not one we issued')
  }
  if (body.s !== strategyId) throw new AppError('UNAUTHENTICATED', 'the stream ticket was issued for another strategy')
  if (!(now <= body.e)) throw new AppError('UNAUTHENTICATED', 'the stream ticket has expired (tickets are valid 30 s)')
  if (!(await shared.claimOnce(`ticket:${body.n}`, 2 * TICKET_TTL_MS, now))) throw new AppError('UNAUTHENTICATED', 'the stream ticket was already used')
  // The stream needs no scope beyond the ticket: the asker held strategies:read for POST …/stream-ticket.
  const credential = body.k !== undefined ? { keyId: body.k, keyVersion: body.v } : { keyId: null, expiresAt: body.x }
  return { userId: body.u, scopes: new Set(), ...credential }
}
