import { type Selectable, sql } from 'kysely'
import type pg from 'pg'
import type { Db } from '../db/connect.js'
import type { StrategiesTable, StrategyStatus } from '../db/schema.js'
import type { KeysetPosition } from '../http/cursor.js'

export type StrategyRow = Selectable<StrategiesTable>

/** A new strategy; template_version only for a custom template (null otherwise). */
export async function insertStrategy(
  db: Db,
  row: Omit<StrategyRow, 'status' | 'template_version' | 'stat_open_positions' | 'stat_total_pnl' | 'stat_total_trades' | 'stat_winning_trades'> &
    Partial<Pick<StrategyRow, 'template_version'>> & { params: Record<string, unknown> },
): Promise<StrategyRow> {
  return db
    .insertInto('strategies')
    .values({ ...row, params: JSON.stringify(row.params) })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/**
 * A live (not deleted) strategy of this user; `forUpdate` locks it for a state change, FOR NO KEY UPDATE: no
 * write changes a strategy's id, so inserts of its orders and trades elsewhere (whose foreign-key checks take
 * KEY SHARE) need not wait behind the lock. A strategy is locked before its runs (docs/decisions.md, "Lock order").
 */
export async function findStrategy(db: Db, userId: number, id: string, forUpdate = false): Promise<StrategyRow | undefined> {
  let query = db.selectFrom('strategies').selectAll().where('id', '=', id).where('user_id', '=', userId).where('deleted_at', 'is', null)
  if (forUpdate) query = query.forNoKeyUpdate()
  return query.executeTakeFirst()
}

/**
 * Locks strategies (FOR NO KEY UPDATE) in id order, for a writer that goes on to lock or write their runs:
 * every writer locks strategies before runs, each table in key order (docs/decisions.md, "Lock order").
 */
export async function lockStrategies(trx: Db, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  await sql`SELECT id FROM strategies WHERE id = ANY(${[...ids]}::text[]) ORDER BY id FOR NO KEY UPDATE`.execute(trx)
}

/**
 * Live strategies by (user, id), for many requests in one statement; the rows of those that exist, in
 * no order. A named statement on the pool under Kysely (planned once per connection).
 */
export async function findStrategiesByKeys(pool: pg.Pool, keys: readonly { userId: number; id: string }[]): Promise<StrategyRow[]> {
  const { rows } = await pool.query<StrategyRow>({
    name: 'perpetua_strategies_by_keys',
    text: `SELECT s.* FROM strategies s
      JOIN unnest($1::text[], $2::int[]) AS k(id, user_id) ON s.id = k.id AND s.user_id = k.user_id
      WHERE s.deleted_at IS NULL`,
    values: [keys.map((k) => k.id), keys.map((k) => k.userId)],
  })
  return rows
}

/** A strategy of this user including deleted ones (a backtest naming a deleted strategy is 409, not 404). */
export async function findStrategyAnyState(db: Db, userId: number, id: string): Promise<StrategyRow | undefined> {
  return db.selectFrom('strategies').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst()
}

export async function listStrategies(
  db: Db,
  userId: number,
  filter: { status?: StrategyStatus; after?: KeysetPosition; limit: number },
): Promise<StrategyRow[]> {
  let query = db.selectFrom('strategies').selectAll().where('user_id', '=', userId).where('deleted_at', 'is', null)
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.after) {
    const { time, id } = filter.after
    query = query.where((eb) => eb.or([eb('created_at', '<', time), eb.and([eb('created_at', '=', time), eb('id', '<', id)])]))
  }
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(filter.limit).execute()
}

export async function updateStrategy(
  db: Db,
  userId: number,
  id: string,
  changes: Partial<Pick<StrategyRow, 'name' | 'template_id' | 'template_version' | 'symbols' | 'timeframe' | 'capital' | 'leverage' | 'status' | 'updated_at'>> & {
    params?: Record<string, unknown>
  },
): Promise<StrategyRow> {
  const { params, ...rest } = changes
  return db
    .updateTable('strategies')
    .set({ ...rest, ...(params !== undefined ? { params: JSON.stringify(params) } : {}) })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function markStrategyDeleted(db: Db, userId: number, id: string, at: Date): Promise<void> {
  await db.updateTable('strategies').set({ deleted_at: at, updated_at: at }).where('id', '=', id).where('user_id', '=', userId).execute()
}
