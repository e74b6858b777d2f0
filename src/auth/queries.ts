import type { Db } from '../db/connect.js'

export async function findOrCreateUserByEmail(db: Db, email: string): Promise<number> {
  const inserted = await db
    .insertInto('users')
    .values({ email, idpa_id: null, idpb_id: null, plan_expires_at: null })
    .onConflict((oc) => oc.column('email').doNothing())
    .returning('id')
    .executeTakeFirst()
  if (inserted) return inserted.id
  const existing = await db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()
  return existing.id
}

export async function insertApiKey(
  db: Db,
  key: { id: string; userId: number; name: string; scopes: string[]; secretEnc: string },
): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({ id: key.id, user_id: key.userId, name: key.name, scopes: key.scopes, secret_enc: key.secretEnc, revoked_at: null })
    .execute()
}

export async function findActiveApiKey(db: Db, id: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'user_id', 'scopes', 'secret_enc'])
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .executeTakeFirst()
}

export async function userExists(db: Db, id: number): Promise<boolean> {
  return (await db.selectFrom('users').select('id').where('id', '=', id).executeTakeFirst()) !== undefined
}
