import type { Config } from './config.js'
import { type DatabaseHandle, openDatabase } from './db/connect.js'
import { acquireLock } from './db/data-dir-lock.js'
import { migrateToLatest } from './db/migrate.js'

/** A migrated database for one process, and the data-dir lock that embedded mode needs while it is open. */
export interface Storage {
  database: DatabaseHandle
  migrationsApplied: string[]
  close(): Promise<void>
}

/**
 * Storage on its way: `database` can be handed to services and routes at once, but takes queries only
 * once `opened` resolves (the embedded database started and every migration applied). `close()` works
 * at any point; a failed opening has closed itself.
 */
export interface OpeningStorage {
  database: DatabaseHandle
  opened: Promise<Storage>
  close(): Promise<void>
}

export async function openStorage(config: Config, role: string): Promise<Storage> {
  return beginOpeningStorage(config, role).opened
}

/** Takes the data-dir lock (throws when another process holds it) and starts opening the database. */
export function beginOpeningStorage(config: Config, role: string): OpeningStorage {
  const lock = config.databaseUrl ? undefined : acquireLock(config.dataDir, role)
  let database: DatabaseHandle
  let ready: Promise<void>
  try {
    ;({ database, ready } = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: config.dbPoolMax }))
  } catch (error) {
    lock?.release()
    throw error
  }
  let closed: Promise<void> | undefined
  const close = () => {
    closed ??= (async () => {
      try {
        await database.close()
      } finally {
        lock?.release()
      }
    })()
    return closed
  }
  const opened = (async () => {
    try {
      await ready
      const migrationsApplied = await migrateToLatest(database.db as never)
      return { database, migrationsApplied, close }
    } catch (error) {
      await close()
      throw error
    }
  })()
  return { database, opened, close }
}
