import { type Selectable, sql } from 'kysely'
import type pg from 'pg'
import type { Db } from '../db/connect.js'
import type { StrategiesTable, StrategyStatus } from '../db/schema.js'
import type { KeysetPosition } from '../http/cursor.js'

/** What the record shows of the strategy's latest run (null before its first deploy): its mode, its exchange key, its last bar. */
export interface LatestRunColumns {
  run_dry_run: boolean | null
  run_exchange_key_id: string | null
  run_exchange_key_label: string | null
  run_last_bar_at: Date | null
}

/** A strategy as stored, with its latest run's columns (every read joins them: one index probe of strategy_runs' key). */
export type StrategyRow = Selectable<StrategiesTable> & LatestRunColumns

/** The latest-run columns of a strategy that has never run (a row just inserted). */
export const NO_RUN: LatestRunColumns = { run_dry_run: null, run_exchange_key_id: null, run_exchange_key_label: null, run_last_bar_at: null }

/** SELECT of strategies (as s) with their latest run's columns; a row lock takes the strategy row only. */
function selectWithRun(db: Db) {
  return db
    .selectFrom('strategies as s')
    .leftJoinLateral(
      (eb) => eb.selectFrom('strategy_runs as r').select(['r.dry_run', 'r.exchange_key_id', 'r.last_bar_at']).whereRef('r.strategy_id', '=', 's.id').orderBy('r.run', 'desc').limit(1).as('r'),
      (join) => join.onTrue(),
    )
    .leftJoin('exchange_keys as k', 'k.id', 'r.exchange_key_id')
    .selectAll('s')
    .select(['r.dry_run as run_dry_run', 'r.exchange_key_id as run_exchange_key_id', 'k.label as run_exchange_key_label', 'r.last_bar_at as run_last_bar_at'])
}

/** The SQL of the same join, for statements written by hand (findStrategiesByKeys). */
const WITH_RUN_SQL = `LEFT JOIN LATERAL (SELECT dry_run, exchange_key_id, last_bar_at FROM strategy_runs r WHERE r.strategy_id = s.id ORDER BY r.run DESC LIMIT 1) r ON true
      LEFT JOIN exchange_keys k ON k.id = r.exchange_key_id`
const WITH_RUN_COLUMNS = 'r.dry_run AS run_dry_run, r.exchange_key_id AS run_exchange_key_id, k.label AS run_exchange_key_label, r.last_bar_at AS run_last_bar_at'

/** A new strategy; template_version only for a custom template (null otherwise). */
export async function insertStrategy(
  db: Db,
  row: Omit<
    Selectable<StrategiesTable>,
    'status' | 'template_version' | 'stat_open_positions' | 'stat_total_pnl' | 'stat_total_trades' | 'stat_winning_trades' | 'last_error_code' | 'last_error_message' | 'last_error_at' | 'exits'
  > &
    Partial<Pick<StrategyRow, 'template_version' | 'exits'>> & { params: Record<string, unknown> },
): Promise<StrategyRow> {
  const inserted = await db
    .insertInto('strategies')
    .values({ ...row, params: JSON.stringify(row.params), exits: row.exits ? JSON.stringify(row.exits) : null })
    .returningAll()
    .executeTakeFirstOrThrow()
  return { ...inserted, ...NO_RUN }
}

/**
 * A live (not deleted) strategy of this user; `forUpdate` locks it for a state change, FOR NO KEY UPDATE: no
 * write changes a strategy's id, so inserts of its orders and trades elsewhere (whose foreign-key checks take
 * KEY SHARE) need not wait behind the lock. A strategy is locked before its runs (docs/decisions/live.md, "Lock order").
 */
export async function findStrategy(db: Db, userId: number, id: string, forUpdate = false): Promise<StrategyRow | undefined> {
  let query = selectWithRun(db).where('s.id', '=', id).where('s.user_id', '=', userId).where('s.deleted_at', 'is', null)
  if (forUpdate) query = query.forNoKeyUpdate('s')
  return query.executeTakeFirst()
}

/**
 * Locks strategies (FOR NO KEY UPDATE) in id order, for a writer that goes on to lock or write their runs:
 * every writer locks strategies before runs, each table in key order (docs/decisions/live.md, "Lock order").
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
    text: `SELECT s.*, ${WITH_RUN_COLUMNS} FROM strategies s
      JOIN unnest($1::text[], $2::int[]) AS q(id, user_id) ON s.id = q.id AND s.user_id = q.user_id
      ${WITH_RUN_SQL}
      WHERE s.deleted_at IS NULL`,
    values: [keys.map((k) => k.id), keys.map((k) => k.userId)],
  })
  return rows
}

/** A strategy of this user including deleted ones (a backtest naming a deleted strategy is 409, not 404). */
export async function findStrategyAnyState(db: Db, userId: number, id: string): Promise<StrategyRow | undefined> {
  return selectWithRun(db).where('s.id', '=', id).where('s.user_id', '=', userId).executeTakeFirst()
}

/** A strategy by id alone, any user (a stream status message inside a writer's transaction). */
export async function findStrategyById(db: Db, id: string): Promise<StrategyRow> {
  return selectWithRun(db).where('s.id', '=', id).executeTakeFirstOrThrow()
}

export async function listStrategies(
  db: Db,
  userId: number,
  filter: { status?: StrategyStatus; after?: KeysetPosition; limit: number },
): Promise<StrategyRow[]> {
  let query = selectWithRun(db).where('s.user_id', '=', userId).where('s.deleted_at', 'is', null)
  if (filter.status) query = query.where('s.status', '=', filter.status)
  if (filter.after) {
    const { time, id } = filter.after
    query = query.where((eb) => eb.or([eb('s.created_at', '<', time), eb.and([eb('s.created_at', '=', time), eb('s.id', '<', id)])]))
  }
  return query.orderBy('s.created_at', 'desc').orderBy('s.id', 'desc').limit(filter.limit).execute()
}

export async function updateStrategy(
  db: Db,
  userId: number,
  id: string,
  changes: Partial<Pick<StrategyRow, 'name' | 'template_id' | 'template_version' | 'symbols' | 'timeframe' | 'capital' | 'leverage' | 'status' | 'updated_at' | 'exits'>> & {
    params?: Record<string, unknown>
  },
): Promise<StrategyRow> {
  const { params, exits, ...rest } = changes
  await db
    .updateTable('strategies')
    .set({ ...rest, ...(params !== undefined ? { params: JSON.stringify(params) } : {}), ...(exits !== undefined ? { exits: exits === null ? null : JSON.stringify(exits) } : {}) })
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow()
  return findStrategyById(db, id)
}

export async function markStrategyDeleted(db: Db, userId: number, id: string, at: Date): Promise<void> {
  await db.updateTable('strategies').set({ deleted_at: at, updated_at: at }).where('id', '=', id).where('user_id', '=', userId).execute()
}
