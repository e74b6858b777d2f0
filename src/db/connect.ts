import { Kysely, type LogEvent, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { PgliteSnapshot } from './pglite-snapshot.js'
import { type PgliteHost, PGLITE_SOCKET_PORT, socketDirFor, startPgliteHost } from './pglite-host.js'
import type { Database } from './schema.js'
import { metrics } from '../ops/registry.js'

export type Db = Kysely<Database>

/** An open database: the Kysely handle, the pool under it, and how to close both. */
export interface DatabaseHandle {
  db: Db
  pool: pg.Pool
  kind: 'embedded' | 'server'
  /** Embedded only: a consistent copy of the database, taken in its thread (`perpetua backup`). */
  snapshot?: () => Promise<PgliteSnapshot>
  close(): Promise<void>
}

export interface ConnectOptions {
  /** A PostgreSQL server; when absent, the embedded PGlite in `dataDir/pg` is started. */
  databaseUrl: string | undefined
  dataDir: string
  poolMax: number
}

/** Opens the configured database. Embedded mode starts PGlite in a worker thread; the caller must hold the data-dir lock. */
export async function connectDatabase(options: ConnectOptions): Promise<DatabaseHandle> {
  const opening = openDatabase(options)
  await opening.ready
  return opening.database
}

/**
 * Opens the configured database, handing out its handle at once: the pool connects on the first
 * query, so callers may build on `database` while the embedded database starts in its thread, but
 * query only once `ready` resolves. `database.close()` also stops a database still starting.
 */
export function openDatabase(options: ConnectOptions): { database: DatabaseHandle; ready: Promise<void> } {
  if (options.databaseUrl) {
    return { database: wrap(new pg.Pool({ connectionString: options.databaseUrl, max: options.poolMax }), 'server'), ready: Promise.resolve() }
  }
  const host = startPgliteHost(options.dataDir)
  const pool = embeddedPool(socketDirFor(options.dataDir), Math.min(options.poolMax, EMBEDDED_POOL_MAX))
  return { database: wrap(pool, 'embedded', host), ready: host.then(() => undefined) }
}


/**
 * PGlite executes one sequence at a time, but with several connections the next query is already
 * queued in the database thread while the previous answer travels back: 5,000 concurrent queries took
 * 393 µs each on one connection, 204 on two, 160 on four. Our wire server keeps sequences whole and
 * serialises transactions, so more connections are safe; beyond four they add nothing.
 */
const EMBEDDED_POOL_MAX = 4

function embeddedPool(socketDir: string, max: number): pg.Pool {
  return new pg.Pool({ host: socketDir, port: PGLITE_SOCKET_PORT, user: 'postgres', database: 'postgres', max })
}

function wrap(pool: pg.Pool, kind: DatabaseHandle['kind'], host?: Promise<PgliteHost>): DatabaseHandle {
  // An idle client that errors (server restart, socket closed) must not crash the process.
  pool.on('error', () => undefined)
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log: countSlowQueries })
  let closed: Promise<void> | undefined
  return {
    db,
    pool,
    kind,
    ...(host ? { snapshot: async () => (await host).snapshot() } : {}),
    close() {
      closed ??= (async () => {
        await db.destroy() // ends the pool
        await (await host?.catch(() => undefined))?.stop()
      })()
      return closed
    },
  }
}

/**
 * Counts queries over 1 s (perpetua_db_slow_queries_total). Kysely times every query it runs for its log hook
 * anyway; pg-boss's and the batched strategy reads' statements go to the pool directly and are not counted.
 */
function countSlowQueries(event: LogEvent): void {
  if (event.queryDurationMillis > SLOW_QUERY_MS) metrics.dbSlowQueries.inc()
}
const SLOW_QUERY_MS = 1000
