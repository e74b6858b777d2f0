import { sql } from 'kysely'
import type { Db } from '../db/connect.js'
import type { VerificationStatus } from '../db/schema.js'

export interface ExchangeKeyRow {
  id: string
  user_id: number
  label: string | null
  api_key_masked: string
  verification_status: VerificationStatus
  verification_code: number | null
  verification_message: string | null
  last_verified: Date | null
  created_at: Date
}

/** A row with its sealed credentials, for the one place that calls the exchange with them. */
export interface SealedExchangeKeyRow extends ExchangeKeyRow {
  api_key_enc: string
  api_secret_enc: string
}

const columns = [
  'id',
  'user_id',
  'label',
  'api_key_masked',
  'verification_status',
  'verification_code',
  'verification_message',
  'last_verified',
  'created_at',
] as const

export function listUserKeys(db: Db, userId: number): Promise<ExchangeKeyRow[]> {
  return db.selectFrom('exchange_keys').select(columns).where('user_id', '=', userId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute()
}

/** Locks the user's row and counts their keys, so concurrent registrations respect the limit. */
export async function lockUserAndCountKeys(trx: Db, userId: number): Promise<number> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute()
  const row = await trx.selectFrom('exchange_keys').select(sql<string>`count(*)`.as('n')).where('user_id', '=', userId).executeTakeFirstOrThrow()
  return Number(row.n)
}

export function findByFingerprint(db: Db, userId: number, sha256: string): Promise<{ id: string } | undefined> {
  return db.selectFrom('exchange_keys').select('id').where('user_id', '=', userId).where('api_key_sha256', '=', sha256).executeTakeFirst()
}

export function insertKey(
  db: Db,
  key: {
    id: string
    userId: number
    label: string | null
    apiKeyEnc: string
    apiKeyMasked: string
    apiKeySha256: string
    apiSecretEnc: string
    status: VerificationStatus
    code: number | null
    message: string | null
    lastVerified: Date | null
    createdAt: Date
  },
): Promise<ExchangeKeyRow> {
  return db
    .insertInto('exchange_keys')
    .values({
      id: key.id,
      user_id: key.userId,
      label: key.label,
      api_key_enc: key.apiKeyEnc,
      api_key_masked: key.apiKeyMasked,
      api_key_sha256: key.apiKeySha256,
      api_secret_enc: key.apiSecretEnc,
      verification_status: key.status,
      verification_code: key.code,
      verification_message: key.message,
      last_verified: key.lastVerified,
      created_at: key.createdAt,
    })
    .returning(columns)
    .executeTakeFirstOrThrow()
}

export function findSealedKey(db: Db, userId: number, id: string): Promise<SealedExchangeKeyRow | undefined> {
  return db
    .selectFrom('exchange_keys')
    .select([...columns, 'api_key_enc', 'api_secret_enc'])
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirst()
}

/** The newest key registered by the user with this email: "the registered key" of the email lookup. */
export function findNewestSealedKeyByEmail(db: Db, email: string): Promise<SealedExchangeKeyRow | undefined> {
  return db
    .selectFrom('exchange_keys')
    .innerJoin('users', 'users.id', 'exchange_keys.user_id')
    .select(columns.map((column) => `exchange_keys.${column}` as const))
    .select(['exchange_keys.api_key_enc', 'exchange_keys.api_secret_enc'])
    .where('users.email', '=', email)
    .orderBy('exchange_keys.created_at', 'desc')
    .orderBy('exchange_keys.id', 'desc')
    .limit(1)
    .executeTakeFirst()
}

/**
 * Records a check's outcome. A pending outcome keeps the last verdict's time (`last_verified` is when
 * the exchange last answered) and is not written over a verdict at all: an unreachable exchange does
 * not turn a verified key back into an unknown one.
 */
export function recordVerification(
  db: Db,
  id: string,
  outcome: { status: VerificationStatus; code: number | null; message: string | null },
  at: Date,
): Promise<ExchangeKeyRow | undefined> {
  const query = db.updateTable('exchange_keys').where('id', '=', id)
  if (outcome.status === 'pending') {
    return query
      .set({ verification_code: outcome.code, verification_message: outcome.message })
      .where('verification_status', '=', 'pending')
      .returning(columns)
      .executeTakeFirst()
  }
  return query
    .set({ verification_status: outcome.status, verification_code: outcome.code, verification_message: outcome.message, last_verified: at })
    .returning(columns)
    .executeTakeFirst()
}

export function findKey(db: Db, id: string): Promise<ExchangeKeyRow | undefined> {
  return db.selectFrom('exchange_keys').select(columns).where('id', '=', id).executeTakeFirst()
}

export async function deleteKey(db: Db, userId: number, id: string): Promise<boolean> {
  const row = await db.deleteFrom('exchange_keys').where('id', '=', id).where('user_id', '=', userId).returning('id').executeTakeFirst()
  return row !== undefined
}
