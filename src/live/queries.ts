import { sql } from 'kysely'
import type { Selectable } from 'kysely'
import type { Db } from '../db/connect.js'
import type { OrderStatus, StrategyOrdersTable, StrategyRunsTable } from '../db/schema.js'
import { lockStrategies } from '../strategies/queries.js'

export type RunRow = Selectable<StrategyRunsTable>

export async function activeRun(db: Db, strategyId: string, forUpdate = false): Promise<RunRow | undefined> {
  let query = db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', strategyId).where('ended_at', 'is', null)
  if (forUpdate) query = query.forUpdate()
  return query.executeTakeFirst()
}

export async function lastRunNumber(db: Db, strategyId: string): Promise<number> {
  const row = await db.selectFrom('strategy_runs').select(sql<number>`coalesce(max(run), 0)::int`.as('n')).where('strategy_id', '=', strategyId).executeTakeFirstOrThrow()
  return row.n
}

/** The latest run of a strategy, ended or not: a resumed deploy carries its ledger on. */
export async function latestRun(db: Db, strategyId: string): Promise<RunRow | undefined> {
  return db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', strategyId).orderBy('run', 'desc').limit(1).executeTakeFirst()
}

export async function insertRun(
  db: Db,
  row: Omit<RunRow, 'ended_at' | 'lease_owner' | 'lease_expires_at' | 'state' | 'params' | 'last_bar_at' | 'start_failures' | 'symbols' | 'exits'> & {
    params: Record<string, unknown>
    /** Every symbol of a many-symbol run; one-symbol runs may leave it out. */
    symbols?: string[]
    /** The strategy's protective exits as written (a dry run's); none when left out. */
    exits?: RunRow['exits']
  },
): Promise<void> {
  const { exits, ...rest } = row
  await db
    .insertInto('strategy_runs')
    .values({ ...rest, symbols: row.symbols ?? [row.symbol], params: JSON.stringify(row.params), exits: exits ? JSON.stringify(exits) : null, ended_at: null, lease_owner: null, lease_expires_at: null, state: null })
    .execute()
}

export async function endRun(db: Db, strategyId: string, run: number, at: Date): Promise<void> {
  await db.updateTable('strategy_runs').set({ ended_at: at, lease_owner: null, lease_expires_at: null }).where('strategy_id', '=', strategyId).where('run', '=', run).execute()
}

/** Capital of the user's other active runs of one kind (dry or on one exchange key), for the 402 check. */
export async function committedCapital(db: Db, userId: number, dryRun: boolean, exchangeKeyId: string | null, exceptStrategy: string): Promise<number> {
  let query = db
    .selectFrom('strategy_runs')
    .select(sql<string>`coalesce(sum(capital), 0)`.as('total'))
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .where('dry_run', '=', dryRun)
    .where('strategy_id', '!=', exceptStrategy)
  if (!dryRun) query = query.where('exchange_key_id', '=', exchangeKeyId)
  return Number((await query.executeTakeFirstOrThrow()).total)
}

/**
 * Another active live run of the user on the exchange key that trades any of `symbols` (positions net on
 * the account in one-way mode). Dry runs never clash: each trades its own paper ledger (DESIGN §6).
 */
export async function liveRunOnSymbols(db: Db, userId: number, symbols: readonly string[], exchangeKeyId: string, exceptStrategy: string): Promise<{ strategyId: string; symbol: string } | undefined> {
  const row = await db
    .selectFrom('strategy_runs')
    .select(['strategy_id', 'symbols'])
    .where('user_id', '=', userId)
    .where('ended_at', 'is', null)
    .where('dry_run', '=', false)
    .where('exchange_key_id', '=', exchangeKeyId)
    .where('strategy_id', '!=', exceptStrategy)
    .where(sql<boolean>`symbols && ${sql.val([...symbols])}::text[]`)
    .orderBy('strategy_id')
    .executeTakeFirst()
  if (!row) return undefined
  return { strategyId: row.strategy_id, symbol: row.symbols.find((s) => symbols.includes(s))! }
}

export async function paperBalance(db: Db, userId: number): Promise<number> {
  const row = await db.selectFrom('users').select('paper_balance').where('id', '=', userId).executeTakeFirstOrThrow()
  return Number(row.paper_balance)
}

/**
 * Claims up to `limit` active runs whose lease is free or expired, for `owner` until `until`. SKIP
 * LOCKED lets processes claim side by side; the expiry check in the same statement is what makes a
 * run owned by one process at a time.
 */
export async function claimRuns(db: Db, owner: string, now: Date, until: Date, limit: number): Promise<RunRow[]> {
  const result = await sql<RunRow>`
    UPDATE strategy_runs SET lease_owner = ${owner}, lease_expires_at = ${until}
    WHERE (strategy_id, run) IN (
      SELECT strategy_id, run FROM strategy_runs
      WHERE ended_at IS NULL AND (lease_expires_at IS NULL OR lease_expires_at < ${now})
      ORDER BY started_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING *`.execute(db)
  return result.rows
}

/**
 * Renews the leases `owner` still holds; returns the strategy ids kept (a paused or stolen run is gone). The
 * rows are locked in key order first, as every writer of runs locks them (docs/decisions/live.md, "Lock order"):
 * an UPDATE alone locks in scan order, and once met a batch commit locking the same runs in a cycle.
 */
export async function renewLeases(db: Db, owner: string, strategyIds: readonly string[], until: Date): Promise<Set<string>> {
  if (strategyIds.length === 0) return new Set()
  const result = await sql<{ strategy_id: string }>`
    UPDATE strategy_runs r SET lease_expires_at = ${until}
    FROM (SELECT strategy_id, run FROM strategy_runs
          WHERE lease_owner = ${owner} AND ended_at IS NULL AND strategy_id = ANY(${[...strategyIds]}::text[])
          ORDER BY strategy_id, run FOR UPDATE) AS held
    WHERE r.strategy_id = held.strategy_id AND r.run = held.run
    RETURNING r.strategy_id`.execute(db)
  return new Set(result.rows.map((r) => r.strategy_id))
}

/** VACUUM (not FULL: no exclusive lock) of the tables every bar updates; outside any transaction. */
export async function vacuumRunTables(db: Db): Promise<void> {
  await sql`VACUUM strategy_runs, strategies, strategy_orders`.execute(db)
}

/** The channel a node NOTIFYs when it frees run leases, so every other node claims them at once. */
export const RUNS_RELEASED_CHANNEL = 'perpetua_runs_released'

/**
 * Frees `owner`'s leases (a pool stopping), the rows locked in key order like every writer of runs; once that
 * committed, NOTIFYs RUNS_RELEASED_CHANNEL so every other node claims them now, not at its next round (up to
 * LEASE_RENEW_MS later: 0.6–5.1 s measured, issue 32). Only `strategyIds` when given. Returns the strategy ids freed.
 */
export async function releaseLeases(db: Db, owner: string, strategyIds?: readonly string[]): Promise<string[]> {
  if (strategyIds?.length === 0) return []
  const only = strategyIds === undefined ? sql`` : sql`AND strategy_id = ANY(${[...strategyIds]}::text[])`
  const result = await sql<{ strategy_id: string }>`
    UPDATE strategy_runs r SET lease_owner = NULL, lease_expires_at = NULL
    FROM (SELECT strategy_id, run FROM strategy_runs WHERE lease_owner = ${owner} AND ended_at IS NULL ${only} ORDER BY strategy_id, run FOR UPDATE) AS held
    WHERE r.strategy_id = held.strategy_id AND r.run = held.run
    RETURNING r.strategy_id`.execute(db)
  if (result.rows.length > 0) await sql`SELECT pg_notify(${RUNS_RELEASED_CHANNEL}, '')`.execute(db)
  return result.rows.map((row) => row.strategy_id)
}

/** Saves a runner's state if it still owns the active run; false when the run was paused or taken over. */
export async function saveRunState(db: Db, strategyId: string, run: number, owner: string | null, state: Record<string, unknown>): Promise<boolean> {
  let query = db.updateTable('strategy_runs').set({ state: JSON.stringify(state) }).where('strategy_id', '=', strategyId).where('run', '=', run)
  query = owner === null ? query : query.where('lease_owner', '=', owner).where('ended_at', 'is', null)
  const result = await query.executeTakeFirst()
  return Number(result.numUpdatedRows) > 0
}

/**
 * Locks the active runs among `runs` that `owner` holds, after their strategies: the strategy rows first (FOR
 * NO KEY UPDATE, id order), then the run rows (FOR UPDATE, key order), the one order every writer follows
 * (docs/decisions/live.md, "Lock order"). The batch then writes stats, orders and trades of strategies it already
 * holds, so it never waits for a strategy while holding a run a pause waits for.
 *
 * `strategiesFirst` false skips the strategy locks, for a database that runs one transaction at a time (the
 * embedded PGlite: its wire server lets no other transaction in while one is open), where no two writers can
 * wait on each other. Measured there (1,000 runs, the locks plus the stats update): 161 ms median without the
 * strategy locks, 220 ms with them.
 */
export async function lockOwnedRuns(trx: Db, owner: string, runs: readonly { strategyId: string; run: number }[], strategiesFirst = true): Promise<Set<string>> {
  if (strategiesFirst) await lockStrategies(trx, runs.map((r) => r.strategyId))
  const result = await sql<{ strategy_id: string; run: number }>`
    SELECT r.strategy_id, r.run FROM strategy_runs r
    JOIN unnest(${runs.map((r) => r.strategyId)}::text[], ${runs.map((r) => r.run)}::int[]) AS v(strategy_id, run)
      ON r.strategy_id = v.strategy_id AND r.run = v.run
    WHERE r.lease_owner = ${owner} AND r.ended_at IS NULL
    ORDER BY r.strategy_id, r.run
    FOR UPDATE OF r`.execute(trx)
  return new Set(result.rows.map((r) => `${r.strategy_id} ${r.run}`))
}

/** Many runs' states in one statement (the caller holds their leases: RunCommits locked them), with the last bar each acted on (null: none yet, kept). */
export async function saveRunStates(trx: Db, writes: readonly { strategyId: string; run: number; state: Record<string, unknown>; lastBarAt: Date | null }[]): Promise<void> {
  if (writes.length === 0) return
  await sql`
    UPDATE strategy_runs r SET state = v.state, last_bar_at = coalesce(v.last_bar_at, r.last_bar_at)
    FROM unnest(${writes.map((w) => w.strategyId)}::text[], ${writes.map((w) => w.run)}::int[], ${writes.map((w) => JSON.stringify(w.state))}::jsonb[],
                ${writes.map((w) => w.lastBarAt)}::timestamptz[])
      AS v(strategy_id, run, state, last_bar_at)
    WHERE r.strategy_id = v.strategy_id AND r.run = v.run`.execute(trx)
}

export async function nextIntent(db: Db, strategyId: string, run: number): Promise<number> {
  const row = await db
    .selectFrom('strategy_orders')
    .select(sql<number>`coalesce(max(intent), 0)::int`.as('n'))
    .where('strategy_id', '=', strategyId)
    .where('run', '=', run)
    .executeTakeFirstOrThrow()
  return row.n + 1
}

/** An intent row as written before its order is sent (fill columns come later). */
export type OrderInsert = Pick<StrategyOrdersTable, 'client_order_id' | 'strategy_id' | 'run' | 'intent' | 'symbol' | 'target' | 'reduce_only' | 'status'> & { created_at: Date; stated_at?: Date | null } & Partial<Pick<StrategyOrdersTable, 'side' | 'qty'>>

/** An order written filled at once: a dry run's protective exit (reduce-only, its reason). */
export type FilledOrderInsert = OrderInsert & Pick<OrderSettle, 'side' | 'qty' | 'price' | 'fee' | 'filled_at'> & { exit_reason: string }

export async function insertOrder(db: Db, order: OrderInsert): Promise<void> {
  await insertOrders(db, [order])
}

/** Deletes an intent still 'new' (never sent: a pause's close of a symbol found flat). */
export async function deleteUnsentIntent(db: Db, clientOrderId: string): Promise<void> {
  await db.deleteFrom('strategy_orders').where('client_order_id', '=', clientOrderId).where('status', '=', 'new').execute()
}

/** Order rows in one statement (intents, or orders filled at once); one already written (a retried commit) is left as it is. */
export async function insertOrders(db: Db, orders: readonly (OrderInsert | FilledOrderInsert)[]): Promise<void> {
  if (orders.length === 0) return
  await db
    .insertInto('strategy_orders')
    .values(orders.map((order) => ({ side: null, qty: null, price: null, fee: null, filled_at: null, exit_reason: null, stated_at: null, ...order })))
    .onConflict((oc) => oc.column('client_order_id').doNothing())
    .execute()
}

/** An intent's outcome: filled (with its merged fill) or skipped. */
export interface OrderSettle {
  client_order_id: string
  status: OrderStatus
  side: 'buy' | 'sell' | null
  qty: string | null
  price: string | null
  fee: string | null
  filled_at: Date | null
}

/** Settles intents in one statement (one row each). */
export async function settleOrders(db: Db, settles: readonly OrderSettle[]): Promise<void> {
  if (settles.length === 0) return
  const column = <K extends keyof OrderSettle>(key: K) => settles.map((s) => s[key])
  await sql`
    UPDATE strategy_orders o
    SET status = v.status, side = v.side, qty = v.qty, price = v.price, fee = v.fee, filled_at = v.filled_at
    FROM unnest(${column('client_order_id')}::text[], ${column('status')}::text[], ${column('side')}::text[], ${column('qty')}::numeric[],
                ${column('price')}::numeric[], ${column('fee')}::numeric[], ${column('filled_at')}::timestamptz[])
      AS v(client_order_id, status, side, qty, price, fee, filled_at)
    WHERE o.client_order_id = v.client_order_id`.execute(db)
}

/** How the strategy's ledger holds one of its orders (new, filled, skipped, cancelled); undefined when it has none by that id. */
export async function orderStatus(db: Db, strategyId: string, clientOrderId: string): Promise<OrderStatus | undefined> {
  const row = await db.selectFrom('strategy_orders').select('status').where('client_order_id', '=', clientOrderId).where('strategy_id', '=', strategyId).executeTakeFirst()
  return row?.status
}

/** Cancels the run's orders still new (a pause drops the intent waiting for the next open). */
export async function cancelOpenOrders(db: Db, strategyId: string, run: number): Promise<void> {
  await db.updateTable('strategy_orders').set({ status: 'cancelled' }).where('strategy_id', '=', strategyId).where('run', '=', run).where('status', '=', 'new').execute()
}

export async function nextTradeId(db: Db, strategyId: string): Promise<number> {
  const row = await db.selectFrom('strategy_trades').select(sql<number>`coalesce(max(id), 0)::int`.as('n')).where('strategy_id', '=', strategyId).executeTakeFirstOrThrow()
  return row.n + 1
}

export async function insertTrades(db: Db, trades: readonly Selectable<import('../db/schema.js').StrategyTradesTable>[]): Promise<void> {
  if (trades.length === 0) return
  await db.insertInto('strategy_trades').values([...trades]).execute()
}

/** A strategy's stats after fills (spec: cumulative across all runs): the position and PnL now, trades added. */
export interface StatsChange {
  strategyId: string
  openPositions: number
  totalPnl: string
  closedTrades: number
  winningTrades: number
}

/** Updates many strategies' cumulative stats in one statement (one change each). */
export async function updateStatsOf(db: Db, changes: readonly StatsChange[]): Promise<void> {
  if (changes.length === 0) return
  const column = <K extends keyof StatsChange>(key: K) => changes.map((c) => c[key])
  await sql`
    UPDATE strategies s
    SET stat_open_positions = v.open_positions, stat_total_pnl = v.total_pnl,
        stat_total_trades = s.stat_total_trades + v.closed_trades, stat_winning_trades = s.stat_winning_trades + v.winning_trades
    FROM unnest(${column('strategyId')}::text[], ${column('openPositions')}::int[], ${column('totalPnl')}::numeric[],
                ${column('closedTrades')}::int[], ${column('winningTrades')}::int[])
      AS v(id, open_positions, total_pnl, closed_trades, winning_trades)
    WHERE s.id = v.id`.execute(db)
}
