import type { Db } from '../../db/connect.js'
import { recordEvent } from '../../events/outbox.js'
import { AppError, invalidParameter, notFound } from '../../http/errors.js'
import { newApiKeyCredentials, newApiKeySecret } from '../api-keys.js'
import type { KeyDirectory } from '../key-directory.js'
import { isScope, SCOPES } from '../scopes.js'
import type { SecretBox } from '../secret-box.js'
import { type ApiKeyRow, insertKey, listActiveKeys, lockUserAndCountKeys, replaceSecret, revokeKey } from './queries.js'
import { type ApiKey, type ApiKeyCreate, type ApiKeyWithSecret, MAX_API_KEYS, SECRET_WARNING } from './schemas.js'

export const API_KEY_ROTATED = 'account.api_key_rotated'

export interface ApiKeyContext {
  db: Db
  box: SecretBox
  keys: KeyDirectory
  userId: number
  now: Date
}

export async function createKey({ db, box, userId, now }: ApiKeyContext, input: ApiKeyCreate): Promise<ApiKeyWithSecret> {
  const name = input.name.trim()
  if (name === '') throw invalidParameter('name', 'name must not be blank')
  const unknown = input.scopes.find((scope) => !isScope(scope))
  if (unknown !== undefined) throw invalidParameter('scopes', `unknown scope "${unknown}"; known scopes: ${SCOPES.join(', ')}`)
  const scopes = SCOPES.filter((scope) => input.scopes.includes(scope))
  const { id, secret } = newApiKeyCredentials()
  const row = await db.transaction().execute(async (trx) => {
    const active = await lockUserAndCountKeys(trx, userId)
    if (active >= MAX_API_KEYS) {
      throw new AppError('LIMIT_REACHED', `you already have ${active} API keys; the limit is ${MAX_API_KEYS}: delete one first`)
    }
    return insertKey(trx, { id, userId, name, scopes, secretEnc: box.seal(secret), createdAt: now })
  })
  return withSecret(row, secret)
}

export async function listKeys({ db, userId }: ApiKeyContext): Promise<{ data: ApiKey[] }> {
  return { data: (await listActiveKeys(db, userId)).map(toApiKey) }
}

/**
 * A new secret for the key; the old one is refused from the next request on. The rotation and its
 * account.api_key_rotated event commit together. The cache entry is dropped before the write and
 * again after the commit, so no read that overlapped the change can keep the old secret alive.
 */
export async function rotateKey({ db, box, keys, userId, now }: ApiKeyContext, id: string): Promise<ApiKeyWithSecret> {
  const secret = newApiKeySecret()
  keys.forget(id)
  const row = await db.transaction().execute(async (trx) => {
    const rotated = await replaceSecret(trx, userId, id, box.seal(secret), now)
    if (!rotated) throw notFound(`API key ${id}`)
    await recordEvent(trx, {
      userId,
      type: API_KEY_ROTATED,
      data: { key_id: rotated.id, name: rotated.name, rotated_at: now.toISOString() },
      at: now,
    })
    return rotated
  })
  keys.forget(id)
  return withSecret(row, secret)
}

/** Revokes the key: refused from the next request on. */
export async function deleteKey({ db, keys, userId, now }: ApiKeyContext, id: string): Promise<void> {
  keys.forget(id)
  const revoked = await revokeKey(db, userId, id, now)
  keys.forget(id)
  if (!revoked) throw notFound(`API key ${id}`)
}

function toApiKey(row: ApiKeyRow): ApiKey {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    created_at: row.created_at.toISOString(),
    last_rotated_at: row.last_rotated_at?.toISOString() ?? null,
  }
}

function withSecret(row: ApiKeyRow, secret: string): ApiKeyWithSecret {
  return { ...toApiKey(row), secret, _secret_warning: SECRET_WARNING }
}
