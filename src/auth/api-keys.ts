import crypto from 'node:crypto'
import type { Db } from '../db/connect.js'
import { findOrCreateUserByEmail, insertApiKey } from './queries.js'
import type { Scope } from './scopes.js'
import type { SecretBox } from './secret-box.js'

export interface IssuedKey {
  api_key: string
  api_secret: string
  scopes: Scope[]
}

/** Creates the user if needed and a new API key; the secret is returned here once and stored sealed. */
export async function issueApiKey(
  db: Db,
  box: SecretBox,
  request: { email: string; scopes: Scope[]; name?: string },
): Promise<IssuedKey> {
  const { id, secret } = newApiKeyCredentials()
  await db.transaction().execute(async (trx) => {
    const userId = await findOrCreateUserByEmail(trx, request.email.trim().toLowerCase())
    await insertApiKey(trx, { id, userId, name: request.name ?? '', scopes: request.scopes, secretEnc: box.seal(secret) })
  })
  return { api_key: id, api_secret: secret, scopes: request.scopes }
}

/** A fresh key id (`pk_` + 24 hex) and secret (32 random bytes, base64url). */
export function newApiKeyCredentials(): { id: string; secret: string } {
  return { id: `pk_${crypto.randomBytes(12).toString('hex')}`, secret: newApiKeySecret() }
}

export function newApiKeySecret(): string {
  return crypto.randomBytes(32).toString('base64url')
}
