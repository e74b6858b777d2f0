import type { Config } from './config.js'
import { connectDatabase, type DatabaseHandle } from './db/connect.js'
import { acquireLock } from './db/data-dir-lock.js'
import { migrateToLatest } from './db/migrate.js'

/** A migrated database for one process, and the data-dir lock that embedded mode needs while it is open. */
export interface Storage {
  database: DatabaseHandle
  migrationsApplied: string[]
  close(): Promise<void>
}

export async function openStorage(config: Config, role: string): Promise<Storage> {
  const lock = config.databaseUrl ? undefined : acquireLock(config.dataDir, role)
  try {
    const database = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: config.dbPoolMax })
    try {
      const migrationsApplied = await migrateToLatest(database.db as never)
      return {
        database,
        migrationsApplied,
        async close() {
          await database.close()
          lock?.release()
        },
      }
    } catch (error) {
      await database.close()
      throw error
    }
  } catch (error) {
    lock?.release()
    throw error
  }
}
