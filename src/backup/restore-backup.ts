import fs from 'node:fs'
import path from 'node:path'
import { findKey } from '../auth/local-keys.js'
import type { Config } from '../config.js'
import { acquireLock } from '../db/data-dir-lock.js'
import { knownMigrations } from '../db/migrate.js'
import { createDatabaseFolder } from '../db/pglite-create.js'
import { openPglite } from '../db/pglite-options.js'
import { appliedMigrations } from '../db/pglite-snapshot.js'
import { type BackupManifest, masterKeyId, megabytes, readBackupFile } from './backup-file.js'

export interface RestoreResult {
  file: string
  data_dir: string
  manifest: BackupManifest
}

/**
 * What an empty DATA_DIR may already hold: the key files, which an operator copies in first when the
 * backup's secrets were encrypted with a key kept in the old DATA_DIR (no MASTER_KEY set).
 */
const KEY_FILES = new Set(['master.key', 'app-jwt.key'])

/**
 * `perpetua restore FILE`: into an empty DATA_DIR only, from a backup whose schema this code knows and
 * whose secrets the master key in effect here can read. The database is unpacked into a side folder
 * and opened (which checks it whole) before it is renamed into DATA_DIR/pg; the next `serve` applies
 * any migration newer than the backup.
 */
export async function restoreBackup(config: Config, file: string, progress: (message: string) => void): Promise<RestoreResult> {
  if (config.databaseUrl) throw new Error('DATABASE_URL is set: restore a PostgreSQL database with pg_restore (docs/operating.md, "Backups and restore")')
  const backup = await readBackupFile(file)
  const { manifest } = backup
  progress(`${file}: taken ${manifest.created_at}, schema ${manifest.schema_version ?? 'none'}, ${megabytes(manifest.payload.bytes)}`)
  await refuseUnknownSchema(manifest)
  refuseNonEmpty(config.dataDir)
  refuseOtherMasterKey(config, manifest)

  const lock = acquireLock(config.dataDir, 'restore')
  try {
    refuseNonEmpty(config.dataDir, ['server.lock']) // another restore may have got there between the check and the lock
    const tar = await backup.readTar()
    progress(`unpacking ${megabytes(tar.byteLength)} into ${path.join(config.dataDir, 'pg')}`)
    await createDatabaseFolder(path.join(config.dataDir, 'pg'), async (dir) => {
      const db = await openPglite(dir, new Blob([tar]))
      try {
        const migrations = await appliedMigrations(db)
        if (migrations.join() !== manifest.migrations.join()) throw new Error(`${file} is damaged: its database records other migrations than its manifest`)
      } finally {
        await db.close()
      }
    })
    progress(`restored into ${config.dataDir}; start perpetua serve on it`)
  } finally {
    lock.release()
  }
  return { file, data_dir: config.dataDir, manifest }
}

async function refuseUnknownSchema(manifest: BackupManifest): Promise<void> {
  const known = await knownMigrations()
  const unknown = manifest.migrations.filter((name) => !known.includes(name))
  if (unknown.length === 0) return
  throw new Error(
    `the backup's schema (${manifest.schema_version}) is newer than this version of perpetua knows (up to ${known.at(-1)}): ` +
      `it records migrations ${unknown.join(', ')}; restore it with the version that took it, or a later one`,
  )
}

function refuseNonEmpty(dataDir: string, alsoAllowed: string[] = []): void {
  let entries: string[]
  try {
    entries = fs.readdirSync(dataDir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return
    throw error
  }
  const others = entries.filter((name) => !KEY_FILES.has(name) && !alsoAllowed.includes(name))
  if (others.length === 0) return
  throw new Error(
    `DATA_DIR ${dataDir} is not empty (it holds ${others.slice(0, 5).join(', ')}${others.length > 5 ? ', …' : ''}): ` +
      'restore into an empty DATA_DIR (only master.key and app-jwt.key may be there), then move it into place',
  )
}

function refuseOtherMasterKey(config: Config, manifest: BackupManifest): void {
  if (manifest.master_key_id === null) return
  const key = findKey(config.masterKey, config.dataDir, 'master.key')
  if (!key) {
    throw new Error(
      'the backup holds secrets encrypted with a master key: set MASTER_KEY to it, or copy the master.key of the DATA_DIR it was taken from into ' +
        `${config.dataDir} first`,
    )
  }
  if (masterKeyId(key) !== manifest.master_key_id) {
    throw new Error('the master key in effect (MASTER_KEY, else DATA_DIR/master.key) is not the one that encrypted the backup\'s secrets; they would be unreadable')
  }
}
