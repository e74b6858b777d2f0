import { sql } from 'kysely'
import type { Db } from '../db/connect.js'
import type { PublicStrategy, PublicStrategyCreate } from './public-schemas.js'

type Fields = Omit<PublicStrategyCreate, 'name'>

// Timestamps are `timestamp` (no zone) holding UTC; formatting in SQL keeps them independent of the
// process time zone, which pg would otherwise apply when parsing them into Date.
const naive = (column: 'created_at' | 'updated_at') =>
  sql<string>`to_char(${sql.ref(column)}, 'YYYY-MM-DD"T"HH24:MI:SS.US')`.as(column)
const utcNow = sql<string>`(now() at time zone 'utc')`

const columns = ['id', 'name', 'author', 'description', 'entry_condition', 'exit_condition', 'bot_name'] as const

export async function insertPublicStrategy(db: Db, input: PublicStrategyCreate): Promise<PublicStrategy> {
  return db
    .insertInto('public_strategies')
    .values({
      name: input.name,
      author: input.author ?? null,
      description: input.description ?? null,
      entry_condition: input.entry_condition ?? null,
      exit_condition: input.exit_condition ?? null,
      bot_name: input.bot_name ?? null,
      created_at: utcNow,
      updated_at: utcNow,
    })
    .returning([...columns, naive('created_at'), naive('updated_at')])
    .executeTakeFirstOrThrow()
}

export async function listPublicStrategies(db: Db): Promise<PublicStrategy[]> {
  return db
    .selectFrom('public_strategies')
    .select([...columns, naive('created_at'), naive('updated_at')])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute()
}

export async function findPublicStrategy(db: Db, id: number): Promise<PublicStrategy | undefined> {
  return db
    .selectFrom('public_strategies')
    .select([...columns, naive('created_at'), naive('updated_at')])
    .where('id', '=', id)
    .executeTakeFirst()
}

/** Sets the given non-null fields and refreshes updated_at; undefined when the id does not exist. */
export async function updatePublicStrategy(db: Db, id: number, fields: Fields): Promise<PublicStrategy | undefined> {
  const changes: Partial<Record<keyof Fields, string>> = {}
  for (const key of ['author', 'description', 'entry_condition', 'exit_condition', 'bot_name'] as const) {
    const value = fields[key]
    if (typeof value === 'string') changes[key] = value
  }
  return db
    .updateTable('public_strategies')
    .set({ ...changes, updated_at: sql`greatest(${utcNow}, updated_at + interval '1 microsecond')` })
    .where('id', '=', id)
    .returning([...columns, naive('created_at'), naive('updated_at')])
    .executeTakeFirst()
}
