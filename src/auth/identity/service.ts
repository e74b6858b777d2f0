import type { Db } from '../../db/connect.js'
import type { AppTokens } from '../app-token.js'
import type { IdentityProvider } from './provider.js'
import type { SignInResponse } from './schemas.js'
import { toUserObject, userForIdentity } from './users.js'

export interface SignInDeps {
  db: Db
  tokens: AppTokens
  now: () => number
}

/** Exchanges a provider's identity token for an app token and the user it signs in (created or linked). */
export async function signIn(deps: SignInDeps, provider: IdentityProvider, token: string): Promise<SignInResponse> {
  const identity = await provider.verify(token)
  const user = await userForIdentity(deps.db, identity)
  const now = deps.now()
  return { access_token: await deps.tokens.issue(user.id, now), user: toUserObject(user, now) }
}
