import { sql } from 'kysely'
import type { Db } from '../../db/connect.js'

const columns = ['id', 'name', 'scopes', 'created_at', 'last_rotated_at'] as const

export interface ApiKeyRow {
  id: string
  name: string
  scopes: string[]
  created_at: Date
  last_rotated_at: Date | null
}

/** The user's keys that are not revoked, newest first. */
export function listActiveKeys(db: Db, userId: number): Promise<ApiKeyRow[]> {
  return db
    .selectFrom('api_keys')
    .select(columns)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute()
}

/**
 * Locks the user's row and counts their active keys, so two concurrent creates cannot both pass
 * the limit.
 */
export async function lockUserAndCountKeys(trx: Db, userId: number): Promise<number> {
  await trx.selectFrom('users').select('id').where('id', '=', userId).forUpdate().execute()
  const row = await trx
    .selectFrom('api_keys')
    .select(sql<string>`count(*)`.as('n'))
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}

export function insertKey(
  db: Db,
  key: { id: string; userId: number; name: string; scopes: string[]; secretEnc: string; createdAt: Date },
): Promise<ApiKeyRow> {
  return db
    .insertInto('api_keys')
    .values({
      id: key.id,
      user_id: key.userId,
      name: key.name,
      scopes: key.scopes,
      secret_enc: key.secretEnc,
      created_at: key.createdAt,
      revoked_at: null,
    })
    .returning(columns)
    .executeTakeFirstOrThrow()
}

/** Replaces an active key's secret; undefined when the user has no such active key. */
export function replaceSecret(db: Db, userId: number, id: string, secretEnc: string, at: Date): Promise<ApiKeyRow | undefined> {
  return db
    .updateTable('api_keys')
    .set({ secret_enc: secretEnc, last_rotated_at: at })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .returning(columns)
    .executeTakeFirst()
}

/** Revokes an active key; false when the user has no such active key. */
export async function revokeKey(db: Db, userId: number, id: string, at: Date): Promise<boolean> {
  const row = await db
    .updateTable('api_keys')
    .set({ revoked_at: at })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst()
  return row !== undefined
}
