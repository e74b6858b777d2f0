import { sql } from 'kysely'
import type { Db } from '../../db/connect.js'
import { isUniqueViolation } from '../../db/errors.js'
import { AppError } from '../../http/errors.js'
import { isPlanActive, type Plan } from '../plans.js'
import type { UserObject } from './schemas.js'
import type { VerifiedIdentity } from './provider.js'

/** A user row as the sign-in needs it: the spec's fields plus the plan they derive from. */
export interface UserRecord {
  id: number
  email: string
  name: string
  idpa_id: string | null
  idpb_id: string | null
  plan: Plan
  plan_expires_at: Date | null
  /** plan_expires_at as ISO 8601 UTC without zone (the spec's user object). */
  plan_expires_naive: string | null
  created_at: string
  updated_at: string
}

// UTC without zone, formatted in SQL (like the public strategies) so the process time zone never applies.
const naive = (column: 'created_at' | 'updated_at' | 'plan_expires_at') =>
  sql<string>`to_char(${sql.ref(column)} at time zone 'utc', 'YYYY-MM-DD"T"HH24:MI:SS.US')`
const RECORD = [
  'id',
  'email',
  'name',
  'idpa_id',
  'idpb_id',
  'plan',
  'plan_expires_at',
  naive('plan_expires_at').as('plan_expires_naive'),
  naive('created_at').as('created_at'),
  naive('updated_at').as('updated_at'),
] as const

const ATTEMPTS = 3

/**
 * The user behind a verified identity: the one linked to the provider's subject; else the one with the
 * token's (verified) email, which gets the subject attached; else a new user. Concurrent first sign-ins
 * of one person meet at the unique constraints on email and subject: the loser inserts nothing (or
 * hits a violation) and goes round again, finding the winner's row.
 */
export async function userForIdentity(db: Db, identity: VerifiedIdentity): Promise<UserRecord> {
  const column = identity.provider === 'idpa' ? 'idpa_id' : 'idpb_id'
  for (let attempt = 1; ; attempt++) {
    try {
      const linked = await db.selectFrom('users').select(RECORD).where(column, '=', identity.subject).executeTakeFirst()
      if (linked) return linked
      const { email } = identity
      if (email === undefined) {
        throw new AppError(
          'UNAUTHENTICATED',
          `this ${identity.provider} account has not signed in before and its token carries no email address: sign in again and share the email`,
        )
      }
      const attached = await db
        .updateTable('users')
        .set({ [column]: identity.subject, name: sql`coalesce(nullif(name, ''), ${identity.name ?? ''})`, updated_at: sql`now()` })
        .where('email', '=', email)
        .where(column, 'is', null)
        .returning(RECORD)
        .executeTakeFirst()
      if (attached) return attached
      const holder = await db.selectFrom('users').select(RECORD).where('email', '=', email).executeTakeFirst()
      if (holder) {
        if (holder[column] === identity.subject) return holder
        throw new AppError('UNAUTHENTICATED', `${email} already belongs to a user linked to another ${identity.provider} account`)
      }
      const created = await db
        .insertInto('users')
        .values({
          email,
          name: identity.name ?? '',
          idpa_id: column === 'idpa_id' ? identity.subject : null,
          idpb_id: column === 'idpb_id' ? identity.subject : null,
          plan_expires_at: null,
        })
        .onConflict((oc) => oc.doNothing())
        .returning(RECORD)
        .executeTakeFirst()
      if (created) return created
    } catch (error) {
      if (!isUniqueViolation(error) || attempt >= ATTEMPTS) throw error
    }
    if (attempt >= ATTEMPTS) throw new Error(`no user for ${identity.provider} subject after ${ATTEMPTS} attempts`)
  }
}

/** The spec's app-token user object; is_vip is an active Standard-or-better plan at `now`. */
export function toUserObject(user: UserRecord, now: number): UserObject {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    idpa_id: user.idpa_id,
    idpb_id: user.idpb_id,
    is_vip: isPlanActive(user, now),
    vip_expires_at: user.plan_expires_naive,
    created_at: user.created_at,
    updated_at: user.updated_at,
  }
}
