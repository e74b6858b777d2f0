import type { Db } from '../db/connect.js'
import type { ReadCache } from '../db/read-cache.js'
import { isUniqueViolation } from '../db/errors.js'
import { isPositiveDecimal } from '../http/common-schemas.js'
import { decimal } from '../http/decimals.js'
import { decodeCursor, encodeCursor } from '../http/cursor.js'
import { AppError, invalidParameter, notFound, refusal } from '../http/errors.js'
import { isCustomTemplateId } from '../custom-templates/ids.js'
import { newId } from '../http/ids.js'
import type { TemplateCatalog } from '../custom-templates/template-catalog.js'
import type { StrategyReads } from './batched-reads.js'
import type { SymbolCheck } from './tradable-symbols.js'
import { type Exits, exitsProblem, resolvedExits } from './exits.js'
import { findStrategy, insertStrategy, listStrategies, markStrategyDeleted, type StrategyRow, updateStrategy } from './queries.js'
import type { Strategy, StrategyCreate, StrategyListQuery, StrategyPatch } from './schemas.js'
import type { Soon } from '../http/soon.js'

export interface StrategyContext {
  db: Db
  userId: number
  now: Date
  /**
   * Embedded mode only (one node owns the database): caches strategy reads. A PGlite read is ~75%
   * of a signed GET's cost (bench/http.ts). Every write to a strategy must go through this module
   * and call `written()` around it, or `forgetStrategy()` after it; deployed strategies (written by
   * their runners) are never cached.
   */
  cache: ReadCache<StrategyRow | undefined> | undefined
  /** With a PostgreSQL server (no cache): concurrent reads of single strategies share one statement. */
  reads?: StrategyReads | undefined
  /** Built-in and custom templates: params resolved (a custom module's in its sandbox). */
  templates: TemplateCatalog
  /** Refuses symbols the exchange does not list as trading (the gateway's cached exchange info). */
  tradable: SymbolCheck
}

const cacheKey = (userId: number, id: string): string => `${userId}/${id}`

/** Drops a cached strategy after a write made elsewhere (deploy and pause live in src/live/). */
export function forgetStrategy(cache: StrategyContext['cache'], userId: number, id: string): void {
  cache?.invalidate(cacheKey(userId, id))
}

export async function createStrategy({ db, userId, now, cache, templates, tradable }: StrategyContext, input: StrategyCreate): Promise<Strategy> {
  assertPositiveCapital(input.capital)
  if (input.exits !== undefined) assertExits(input.exits)
  // Stored with defaults applied, so a strategy's params say exactly what it runs with; a custom template's latest version is pinned.
  const template = await templates.resolve(userId, input.template_id, input.params ?? {}, { symbols: input.symbols })
  assertMinimumCapital(input.template_id, input.capital, template.minCapital)
  await tradable(input.symbols, 'defer')
  const params = template.params
  for (let attempt = 0; ; attempt++) {
    try {
      const row = await insertStrategy(db, {
        id: newId('strat'),
        user_id: userId,
        name: input.name,
        template_id: input.template_id,
        template_version: template.custom?.version ?? null,
        params,
        symbols: input.symbols,
        timeframe: input.timeframe,
        capital: input.capital,
        leverage: input.leverage ?? 1,
        exits: input.exits ?? null,
        deployed_at: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      })
      cache?.invalidate(cacheKey(userId, row.id))
      return toStrategy(row)
    } catch (error) {
      // 2^32 ids: a collision is rare but possible; draw again.
      if (attempt < 3 && isUniqueViolation(error, 'strategies_pkey')) continue
      throw error
    }
  }
}

export async function getStrategy(context: StrategyContext, id: string): Promise<Strategy> {
  return presentStrategy(await readStrategy(context, id), id)
}

/** The caller's strategy as stored, or undefined: getStrategy's read, for a caller that starts it early. */
export function readStrategy({ db, userId, now, cache, reads }: StrategyContext, id: string): Soon<StrategyRow | undefined> {
  const load = () => (reads && STRATEGY_ID.test(id) ? reads.submit({ userId, id }) : findOwnStrategy(db, userId, id))
  return cache ? cache.get(cacheKey(userId, id), now.getTime(), load, notDeployed) : load()
}

/**
 * A deployed strategy is not cached: its runner writes its stats at every bar, and may move it into
 * error, without going through this module. Every other change of a strategy comes through the API
 * (this module, deploy and pause), which invalidates the entry.
 */
const notDeployed = (row: StrategyRow | undefined): boolean => row?.status !== 'deployed'

/** What getStrategy answers for a row readStrategy found (or 404 for none). */
export function presentStrategy(row: StrategyRow | undefined, id: string): Strategy {
  if (!row) throw notFound(`strategy ${id}`)
  return toStrategy(row)
}

export async function pageStrategies({ db, userId }: StrategyContext, query: StrategyListQuery) {
  const limit = query.limit ?? 20
  const after = query.cursor !== undefined ? decodeCursor(query.cursor) : undefined
  const rows = await listStrategies(db, userId, { status: query.status, after, limit: limit + 1 })
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return {
    data: page.map(toStrategy),
    next_cursor: rows.length > limit && last ? encodeCursor({ time: last.created_at, id: last.id }) : null,
  }
}

export async function patchStrategy(context: StrategyContext, id: string, patch: StrategyPatch): Promise<Strategy> {
  const { db, userId, now } = context
  if (patch.capital !== undefined) assertPositiveCapital(patch.capital)
  if (patch.exits !== undefined && patch.exits !== null) assertExits(patch.exits)
  if (patch.symbols !== undefined) await context.tradable(patch.symbols, 'defer')
  // A custom module's params are resolved in its sandbox before the transaction (PGlite is one session, and a
  // row lock should not wait on a module); the transaction then applies them only to the strategy they were
  // checked against (same updated_at), else it checks again.
  for (let attempt = 0; ; attempt++) {
    const seen = await findOwnStrategy(db, userId, id)
    if (!seen) throw notFound(`strategy ${id}`)
    assertNotDeployed(seen, 'changed')
    const changes = await templateChanges(context, seen, patch)
    const updated = await written(context, id, () =>
      db.transaction().execute(async (trx) => {
        const current = await findOwnStrategy(trx, userId, id, true)
        if (!current) throw notFound(`strategy ${id}`)
        assertNotDeployed(current, 'changed')
        if (current.updated_at.getTime() !== seen.updated_at.getTime() && attempt < 3) return undefined
        // The way out of stopped and error (docs/decisions/live.md, "Moves into stopped and error"): deploy and pause refuse both (spec), an edit
        // acknowledges the cause and returns the strategy to draft, from which it deploys as any draft.
        const reopened = current.status === 'stopped' || current.status === 'error' ? { status: 'draft' as const } : {}
        return toStrategy(await updateStrategy(trx, userId, id, { ...patch, ...changes, ...reopened, updated_at: now }))
      }),
    )
    if (updated) return updated
  }
}

export async function deleteStrategy(context: StrategyContext, id: string): Promise<void> {
  const { db, userId, now } = context
  await written(context, id, () =>
    db.transaction().execute(async (trx) => {
      const current = await findOwnStrategy(trx, userId, id, true)
      if (!current) throw notFound(`strategy ${id}`)
      assertNotDeployed(current, 'deleted')
      await markStrategyDeleted(trx, userId, id, now)
    }),
  )
}

/** Runs a write of one strategy with the cache invalidated before it and after it commits (or fails). */
async function written<T>({ userId, cache }: StrategyContext, id: string, write: () => Promise<T>): Promise<T> {
  const key = cacheKey(userId, id)
  cache?.invalidate(key)
  try {
    return await write()
  } finally {
    cache?.invalidate(key)
  }
}

/** Ids not of our form cannot exist: not found without a query (one with a NUL byte would make PostgreSQL fail). */
const STRATEGY_ID = /^strat_[0-9a-f]{6,8}$/

function findOwnStrategy(db: Db, userId: number, id: string, forUpdate = false): Promise<StrategyRow | undefined> {
  return STRATEGY_ID.test(id) ? findStrategy(db, userId, id, forUpdate) : Promise.resolve(undefined)
}

/**
 * A patch touching the template, its version, its params or the symbols is checked against the template the
 * strategy ends up with: a custom one at the version asked for, else the pinned one while the template stays,
 * else (a new template) its latest.
 */
async function templateChanges(
  { userId, templates }: StrategyContext,
  current: StrategyRow,
  patch: StrategyPatch,
): Promise<{ params?: Record<string, unknown>; template_version?: number | null }> {
  const untouched = patch.template_id === undefined && patch.params === undefined && patch.symbols === undefined && patch.template_version === undefined
  if (untouched && patch.capital === undefined) return {}
  const templateId = patch.template_id ?? current.template_id
  const version = patch.template_version ?? (templateId === current.template_id ? (current.template_version ?? undefined) : undefined)
  if (version !== undefined && !isCustomTemplateId(templateId)) throw invalidParameter('template_version', `template_version is for custom templates; ${templateId} is built in`)
  const template = await templates.resolve(userId, templateId, patch.params ?? current.params, { version, symbols: patch.symbols ?? current.symbols })
  assertMinimumCapital(templateId, patch.capital ?? current.capital, template.minCapital)
  if (untouched) return {}
  // Resolution applies defaults: a params left alone are stored as they were unless the template or its version moved.
  const moved = patch.template_id !== undefined || patch.template_version !== undefined || patch.params !== undefined
  return { ...(moved ? { params: template.params } : {}), template_version: template.custom?.version ?? null }
}

function assertNotDeployed(row: StrategyRow, verb: string): void {
  if (row.status === 'deployed') throw new AppError('INVALID_STATE', `strategy ${row.id} is deployed; pause it before it can be ${verb}`)
}

/** The template's minimum capital (its catalog entry), checked at create, PATCH and deploy alike. */
export function assertMinimumCapital(templateId: string, capital: string, minCapital: number): void {
  if (Number(capital) < minCapital) throw invalidParameter('capital', `template ${templateId} needs a capital of at least ${minCapital}`)
}

function assertPositiveCapital(capital: string): void {
  if (!isPositiveDecimal(capital)) throw invalidParameter('capital', 'capital must be a decimal greater than 0')
}

function assertExits(exits: Exits): void {
  const problem = exitsProblem(exits)
  if (problem) throw refusal(problem)
}

/** The API representation of a stored strategy. */
export function toStrategy(row: StrategyRow): Strategy {
  return {
    id: row.id,
    name: row.name,
    template_id: row.template_id,
    ...(row.template_version !== null ? { template_version: row.template_version } : {}),
    params: row.params,
    symbols: row.symbols,
    timeframe: row.timeframe,
    capital: row.capital,
    leverage: row.leverage,
    exits: row.exits ? resolvedExits(row.exits) : null,
    status: row.status,
    deployed_at: row.deployed_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    stats: {
      open_positions: row.stat_open_positions,
      total_pnl: row.stat_total_pnl,
      total_trades: row.stat_total_trades,
      win_rate: row.stat_total_trades > 0 ? decimal(row.stat_winning_trades / row.stat_total_trades) : '0',
    },
    last_error: row.last_error_code !== null ? { code: row.last_error_code, message: row.last_error_message ?? '', at: (row.last_error_at ?? row.updated_at).toISOString() } : null,
    mode: row.run_dry_run === null ? null : row.run_dry_run ? 'dry_run' : 'live',
    exchange_key: row.run_exchange_key_id !== null ? { id: row.run_exchange_key_id, label: row.run_exchange_key_label } : null,
    last_bar_at: row.run_last_bar_at?.toISOString() ?? null,
  }
}
