import { Kysely, PostgresDialect } from 'kysely'
import pg from 'pg'
import { type PgliteHost, PGLITE_SOCKET_PORT, startPgliteHost } from './pglite-host.js'
import type { Database } from './schema.js'

export type Db = Kysely<Database>

/** An open database: the Kysely handle, the pool under it, and how to close both. */
export interface DatabaseHandle {
  db: Db
  pool: pg.Pool
  kind: 'embedded' | 'server'
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
  if (options.databaseUrl) {
    return wrap(new pg.Pool({ connectionString: options.databaseUrl, max: options.poolMax }), 'server')
  }
  const host = await startPgliteHost(options.dataDir)
  return wrap(embeddedPool(host.socketDir), 'embedded', host)
}


function embeddedPool(socketDir: string): pg.Pool {
  // One connection: PGlite is single-session, and pglite-socket interleaves concurrent connections.
  return new pg.Pool({ host: socketDir, port: PGLITE_SOCKET_PORT, user: 'postgres', database: 'postgres', max: 1 })
}

function wrap(pool: pg.Pool, kind: DatabaseHandle['kind'], host?: PgliteHost): DatabaseHandle {
  // An idle client that errors (server restart, socket closed) must not crash the process.
  pool.on('error', () => undefined)
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
  let closed: Promise<void> | undefined
  return {
    db,
    pool,
    kind,
    close() {
      closed ??= (async () => {
        await db.destroy() // ends the pool
        await host?.stop()
      })()
      return closed
    },
  }
}
