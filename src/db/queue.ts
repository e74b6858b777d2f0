import { CompiledQuery, sql } from 'kysely'
import { PgBoss } from 'pg-boss'
import type { DatabaseHandle, Db } from './connect.js'
import { type ChannelListener, listenOnChannel } from './listen.js'

/** Every enqueue notifies this channel with its queue's name, at its commit, on every node. */
const QUEUED_CHANNEL = 'queue_jobs'

/**
 * pg-boss over our own pool: in embedded mode that is the single PGlite connection (pg-boss's own
 * pool would be a second connection to a single-session database), and one adapter keeps both modes
 * on one path. Later issues register their queues and workers on the returned instance.
 */
export async function startQueue(database: DatabaseHandle, onError: (error: unknown) => void): Promise<PgBoss> {
  const boss = new PgBoss({
    db: { executeSql: (text: string, values?: unknown[]) => database.pool.query(text, values as unknown[]) },
    backend: database.kind === 'embedded' ? 'pglite' : 'postgres',
    schema: 'pgboss',
    // How often a node looks for messages whose worker stopped touching them (work/ensure-queues.ts; one node
    // a pass, under pg-boss's lock): pg-boss's default minute would leave a dead worker's message that long.
    superviseIntervalSeconds: 10,
    monitorIntervalSeconds: 10,
  })
  boss.on('error', onError)
  await boss.start()
  return boss
}

/**
 * A message naming the user whose work it is (`user`) is queued in that user's pg-boss group, so a
 * node's pollers take each user's work at most its share at a time (work/start-work.ts); `priority`
 * (higher first, default 0) orders what is taken among the rest.
 */
export interface Queued {
  user?: number
}

function options(data: object, priority: number | undefined) {
  const { user } = data as Queued
  return { ...(typeof user === 'number' && { group: { id: String(user) } }), ...(priority !== undefined && priority !== 0 && { priority }) }
}

/** Enqueues a job inside the caller's transaction, so it exists exactly when the business write commits. */
export async function sendInTransaction(boss: PgBoss, trx: Db, queue: string, data: object, priority?: number): Promise<void> {
  await boss.send(queue, data, { db: inTransaction(trx), ...options(data, priority) })
  await notifyQueued(trx, queue)
}

/** Enqueues many jobs in one statement inside the caller's transaction (a sweep's tasks), each with the priority `priority` gives it. */
export async function insertInTransaction<T extends object>(boss: PgBoss, trx: Db, queue: string, data: readonly T[], priority?: (item: T) => number): Promise<void> {
  for (let i = 0; i < data.length; i += 1000) {
    const items = data.slice(i, i + 1000).map((item) => ({ data: item, ...options(item, priority?.(item)) }))
    await boss.insert(queue, items, { db: inTransaction(trx) })
  }
  if (data.length > 0) await notifyQueued(trx, queue)
}

function notifyQueued(trx: Db, queue: string) {
  return sql`SELECT pg_notify(${QUEUED_CHANNEL}, ${queue})`.execute(trx)
}

/**
 * Calls `onQueued(queue)` when a job is enqueued on any node (at its commit), so a worker fetches it at
 * once: pg-boss alone looks every 0.5 s, which a sweep measured in seconds paid on each worker process
 * for its first task. After the listening connection comes back, every queue is called ('': any).
 */
export function listenForQueued(database: DatabaseHandle, onQueued: (queue: string) => void, onError: (error: unknown) => void): Promise<ChannelListener> {
  return listenOnChannel(database, QUEUED_CHANNEL, onQueued, onError, () => onQueued(''))
}

function inTransaction(trx: Db) {
  return {
    executeSql: async (text: string, values?: unknown[]) => {
      const result = await trx.executeQuery(CompiledQuery.raw(text, values ?? []))
      return { rows: result.rows as unknown[] }
    },
  }
}
