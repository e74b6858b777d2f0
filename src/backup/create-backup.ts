import fs from 'node:fs'
import path from 'node:path'
import { findKey } from '../auth/local-keys.js'
import type { Config } from '../config.js'
import type { DatabaseHandle } from '../db/connect.js'
import { acquireLock } from '../db/data-dir-lock.js'
import { openPglite } from '../db/pglite-options.js'
import { type PgliteSnapshot, snapshotPglite } from '../db/pglite-snapshot.js'
import { type BackupManifest, megabytes, writeBackupFile } from './backup-file.js'

export interface BackupResult {
  file: string
  manifest: BackupManifest
  /** How long the database was held (no query ran) while its files were copied. */
  held_ms: number
}

/** `perpetua backup` in a running server: the snapshot is taken in the embedded database's thread. */
export async function backupRunningDatabase(database: DatabaseHandle, config: Config, file: string, progress: (message: string) => void): Promise<BackupResult> {
  if (!database.snapshot) throw new Error('DATABASE_URL is set: back up PostgreSQL with pg_dump (docs/operating.md, "Backups and restore")')
  progress('taking a snapshot of the embedded database between transactions')
  return write(config, file, await database.snapshot(), progress)
}

/**
 * `perpetua backup` when no server holds DATA_DIR: takes its lock (a server started meanwhile waits
 * for it), opens the database here without migrating it, and copies it the same way.
 */
export async function backupStoppedDataDir(config: Config, file: string, progress: (message: string) => void): Promise<BackupResult> {
  const lock = acquireLock(config.dataDir, 'backup')
  try {
    const pgDir = path.join(config.dataDir, 'pg')
    if (!fs.existsSync(path.join(pgDir, 'PG_VERSION'))) throw new Error(`${config.dataDir} holds no embedded database (no pg/PG_VERSION): nothing to back up`)
    progress(`no server holds ${config.dataDir}: opening its database here`)
    const db = await openPglite(pgDir).catch((error: unknown) => {
      throw new Error(`cannot open the embedded database in ${pgDir}: ${(error as Error).message}`)
    })
    let snapshot: PgliteSnapshot
    try {
      snapshot = await snapshotPglite(db)
    } finally {
      await db.close()
    }
    return await write(config, file, snapshot, progress)
  } finally {
    lock.release()
  }
}

async function write(config: Config, file: string, snapshot: PgliteSnapshot, progress: (message: string) => void): Promise<BackupResult> {
  progress(`snapshot taken: ${megabytes(snapshot.tar.byteLength)}, schema ${snapshot.migrations.at(-1) ?? 'none'}, database held ${snapshot.heldMs} ms`)
  const masterKey = findKey(config.masterKey, config.dataDir, 'master.key')
  const manifest = await writeBackupFile(file, { tar: snapshot.tar, migrations: snapshot.migrations, masterKey, now: new Date() }, progress)
  return { file, manifest, held_ms: snapshot.heldMs }
}
