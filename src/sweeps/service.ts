import type { Db } from '../db/connect.js'
import type { JobStatus } from '../db/schema.js'
import { isUniqueViolation } from '../db/errors.js'
import { cursorJson, decodeCursor, encodeCursor, encodeCursorJson, isStorableInteger, notACursor } from '../http/cursor.js'
import { AppError, notFound } from '../http/errors.js'
import { newId } from '../http/ids.js'
import { claimPoll } from '../http/rate-limit.js'
import type { SharedState } from '../http/shared-state.js'
import type { TemplateCatalog } from '../custom-templates/template-catalog.js'
import { refuseRangeWithoutBars } from '../backtests/coverage.js'
import type { MarketData } from '../market/market-data.js'
import { type BacktestContext, POLL_INTERVAL_MS, reserveJobSlot } from '../backtests/service.js'
import type { CancelBody } from '../backtests/schemas.js'
import { findSweep, insertSweep, listSweeps, markSweepCancelled, pageRuns, type SweepRow } from './queries.js'
import { resolveSweep, underBase } from './resolve.js'
import { runId } from './returns.js'
import { runJobConfig } from './swept-exits.js'
import type { RunsQuery, Sweep, SweepConfig, SweepCreate, SweepListQuery, SweepRun } from './schemas.js'
import type { SweepTask } from './task-message.js'
import { observeJob } from '../ops/registry.js'

export interface SweepContext {
  db: Db
  userId: number
  now: Date
  templates: TemplateCatalog
  shared: SharedState
  /** Enqueues the sweep's tasks inside the creating transaction (its commit wakes every node's workers: db/queue.ts). */
  enqueue: (trx: Db, tasks: SweepTask[]) => Promise<void>
  /** The listed-symbol check a backtest job makes at submission (BacktestContext.tradable). */
  tradable: BacktestContext['tradable']
  /** The exchange, asked whether base's range holds any bar (refuseRangeWithoutBars). */
  market: MarketData
}

/**
 * Configurations per task: small enough that a lost worker re-runs little and every node gets a
 * share (at least ~32 tasks when there are configurations enough), large enough that a task's fixed
 * cost (its claim, its queue job) stays small beside its backtests.
 */
export const taskSize = (configurations: number): number => Math.min(25, Math.max(1, Math.ceil(configurations / 32)))

export async function createSweep(context: SweepContext, input: SweepCreate): Promise<Sweep> {
  const { db, userId, now } = context
  const { config, configurations } = await resolveSweep(db, userId, input, context.templates, now.getTime(), async (base) => {
    await underBase(() => context.tradable(base.symbols, 'defer', 'listed'))
    // Every run of a sweep reads the same history: a range without bars fails them all, so it is refused before any is queued.
    const range = { symbols: base.symbols, timeframe: base.timeframe, start: Date.parse(base.start), end: Date.parse(base.end) }
    await refuseRangeWithoutBars(context.market.session(), range, now.getTime(), 'base.start')
  })
  const size = taskSize(configurations.length)
  const tasks = Array.from({ length: Math.ceil(configurations.length / size) }, (_, i) => ({
    first_run: i * size + 1,
    run_count: Math.min(size, configurations.length - i * size),
  }))
  const row = await db.transaction().execute(async (trx) => {
    await reserveJobSlot(trx, userId)
    for (let attempt = 0; ; attempt++) {
      const id = newId('sw')
      try {
        const sweep = await insertSweep(trx, { id, userId, templateId: config.base.template_id, config, configurations, submittedAt: now }, tasks)
        await context.enqueue(trx, tasks.map((_, i) => ({ sweepId: id, task: i + 1, attempt: 1, user: userId })))
        return sweep
      } catch (error) {
        if (attempt < 3 && isUniqueViolation(error, 'backtest_sweeps_pkey')) continue
        throw error
      }
    }
  })
  return toSweep(row)
}

export async function pageSweeps({ db, userId }: SweepContext, query: SweepListQuery) {
  const limit = query.limit ?? 20
  const rows = await listSweeps(db, userId, {
    status: query.status as JobStatus | undefined,
    after: query.cursor !== undefined ? decodeCursor(query.cursor) : undefined,
    limit: limit + 1,
  })
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return {
    data: page.map(toSweep),
    next_cursor: rows.length > limit && last ? encodeCursor({ time: last.submitted_at, id: last.id }) : null,
  }
}

/** A sweep of this user; polled at most once every 5 s, as a job is. */
export async function getSweep({ db, userId, now, shared }: SweepContext, id: string): Promise<Sweep> {
  const row = await ownSweep(db, userId, id)
  await claimPoll(shared, `poll:${userId}:${id}`, POLL_INTERVAL_MS, now.getTime(), 'sweep')
  return toSweep(row)
}

export async function cancelSweep({ db, userId, now }: SweepContext, id: string, body: CancelBody): Promise<Sweep> {
  if (!isSweepId(id)) throw notFound(`sweep ${id}`)
  const row = await db.transaction().execute(async (trx) => {
    const current = await findSweep(trx, userId, id, { forUpdate: true })
    if (!current) throw notFound(`sweep ${id}`)
    if (current.status !== 'queued' && current.status !== 'running') throw new AppError('INVALID_STATE', `sweep ${id} is already ${current.status}`)
    return markSweepCancelled(trx, id, now, body.reason ?? null)
  })
  observeJob('sweep', 'cancelled', row, now.getTime())
  return toSweep(row)
}

/** Runs stored so far: in run order, or best first by the sweep's objective. */
export async function pageSweepRuns({ db, userId }: SweepContext, id: string, query: RunsQuery): Promise<{ data: SweepRun[]; next_cursor: string | null }> {
  const sort = query.sort ?? 'run'
  const limit = query.limit ?? 100
  // A bad query is the request's fault whatever the sweep: 400 before the lookup, as every list answers.
  const after = query.cursor === undefined ? undefined : decodeRunCursor(query.cursor, sort)
  const { base } = (await ownSweep(db, userId, id)).config as SweepConfig
  const rows = await pageRuns(db, id, { sort, after, limit: limit + 1 })
  const page = rows.slice(0, limit)
  const last = page[page.length - 1]
  return {
    data: page.map((row) => ({ run_id: runId(row.run_no), params: row.params, metrics: row.metrics as SweepRun['metrics'], config: runJobConfig(base, row.params) })),
    next_cursor: rows.length > limit && last ? encodeRunCursor(sort, { objective: last.objective, run: last.run_no }) : null,
  }
}

export async function ownSweep(db: Db, userId: number, id: string): Promise<SweepRow> {
  const row = isSweepId(id) ? await findSweep(db, userId, id) : undefined
  if (!row) throw notFound(`sweep ${id}`)
  return row
}

const isSweepId = (id: string): boolean => /^sw_[0-9a-f]{8}$/.test(id)

/** Opaque: base64url of JSON [sort, objective or null, run number]. */
function encodeRunCursor(sort: string, position: { objective: number | null; run: number }): string {
  return encodeCursorJson([sort, position.objective, position.run])
}

function decodeRunCursor(cursor: string, sort: string): { objective: number | null; run: number } {
  const value = cursorJson(cursor)
  if (Array.isArray(value) && value.length === 3 && value[0] === sort && (value[1] === null || Number.isFinite(value[1])) && isStorableInteger(value[2])) {
    return { objective: value[1] as number | null, run: value[2] }
  }
  throw notACursor(' for this sort')
}

export function toSweep(row: SweepRow): Sweep {
  return {
    id: row.id,
    status: row.status,
    progress: row.status === 'done' ? 1 : row.runs_total === 0 ? 0 : row.runs_done / row.runs_total,
    config: row.config as SweepConfig,
    submitted_at: row.submitted_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
    result: row.status === 'done' ? (row.result as Sweep['result']) : null,
    error: row.status === 'failed' ? (row.error as Sweep['error']) : null,
  }
}
