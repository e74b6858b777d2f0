import type { Principal } from '../../http/access.js'
import { AppError } from '../../http/errors.js'

/** The refusal of a request without credentials on a Bearer-only route. */
export const BEARER_ONLY_MESSAGE =
  'this endpoint needs a signed-in user: send Authorization: Bearer <app token> (from sign-in, or `perpetua tokens issue` on the server); a signed API-key request is not accepted here'

/**
 * The user behind a request that manages credentials (API keys, exchange keys): only a signed-in
 * user's Bearer app token may. A signed API key may not, whatever its scopes: a leaked read-only key
 * must not be able to mint a key with more scopes, rotate its own secret, or read exchange keys.
 * Checked in the handler, after validation, so a malformed request is a 400 for every caller.
 */
export function signedInUser(principal: Principal | null): number {
  if (!principal) throw new AppError('UNAUTHENTICATED', BEARER_ONLY_MESSAGE)
  if (principal.keyId !== null) {
    throw new AppError('INSUFFICIENT_PERMISSION', 'credentials are managed with a signed-in app token (Authorization: Bearer), not with an API key')
  }
  return principal.userId
}
