import { findOrCreateUserByEmail } from '../../src/auth/queries.js'
import type { TestApp } from '../support/app.js'

export interface SignedInUser {
  userId: number
  email: string
  /** Headers of a request as this signed-in user (Authorization: Bearer <app token>). */
  headers: Record<string, string>
}

let users = 0

/** A user (created by email if needed) with a fresh app token, as after the identity-provider sign-in. */
export async function signIn(t: TestApp, email = `signed-in${++users}-${process.pid}@example.test`): Promise<SignedInUser> {
  const userId = await findOrCreateUserByEmail(t.database.handle.db, email)
  const token = await t.services.tokens.issue(userId, t.clock.now())
  return { userId, email, headers: { authorization: `Bearer ${token}` } }
}
