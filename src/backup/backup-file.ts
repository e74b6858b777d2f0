import crypto from 'node:crypto'
import fs from 'node:fs'
import { promisify } from 'node:util'
import zlib from 'node:zlib'

/**
 * A backup of the embedded store is one file: a magic line, one line of JSON saying what it holds
 * (the manifest), then the database's data directory as a gzip'd tar. The two text lines let an
 * operator read it with `head -2 FILE` and unpack it by hand with `tail -n +3 FILE | tar -xz`.
 */
export const BACKUP_MAGIC = 'PERPETUA-BACKUP 1'
const FORMAT = 1

export interface BackupManifest {
  format: number
  /** What the payload is: PGlite's data directory. A PostgreSQL deployment backs up with pg_dump. */
  store: 'embedded'
  created_at: string
  /** The last migration applied to the database in the backup (null: never migrated). */
  schema_version: string | null
  migrations: string[]
  /**
   * Which master key encrypted the secrets inside (an HMAC of a fixed text under the key, never the
   * key): a restore checks the key it will run with is the same one, or every secret is unreadable.
   */
  master_key_id: string | null
  payload: { encoding: 'tar+gzip'; bytes: number; sha256: string; tar_bytes: number }
}

export interface BackupFile {
  manifest: BackupManifest
  /** The data directory as an uncompressed tar, checked against the manifest's digest. */
  readTar(): Promise<Uint8Array>
}

/** The id a manifest records for `masterKey`. */
export function masterKeyId(masterKey: Buffer): string {
  return crypto.createHmac('sha256', masterKey).update('perpetua backup master key id').digest('hex').slice(0, 16)
}

/**
 * Writes the backup to `file` (mode 0600: users' data and encrypted secrets): into a side file first,
 * renamed into place once complete, so a failed backup never leaves a file that looks whole.
 */
export async function writeBackupFile(
  file: string,
  content: { tar: Uint8Array; migrations: string[]; masterKey: Buffer | undefined; now: Date },
  progress: (message: string) => void,
): Promise<BackupManifest> {
  const gzipped = await promisify(zlib.gzip)(content.tar, { level: 6 })
  progress(`compressed ${megabytes(content.tar.byteLength)} to ${megabytes(gzipped.byteLength)}`)
  const manifest: BackupManifest = {
    format: FORMAT,
    store: 'embedded',
    created_at: content.now.toISOString(),
    schema_version: content.migrations.at(-1) ?? null,
    migrations: content.migrations,
    master_key_id: content.masterKey ? masterKeyId(content.masterKey) : null,
    payload: { encoding: 'tar+gzip', bytes: gzipped.byteLength, sha256: crypto.createHash('sha256').update(gzipped).digest('hex'), tar_bytes: content.tar.byteLength },
  }
  const partial = `${file}.partial`
  const handle = await fs.promises.open(partial, 'w', 0o600)
  try {
    await handle.writeFile(`${BACKUP_MAGIC}\n${JSON.stringify(manifest)}\n`)
    await handle.writeFile(gzipped)
    await handle.sync()
  } finally {
    await handle.close()
  }
  await fs.promises.rename(partial, file)
  progress(`wrote ${file} (${megabytes(gzipped.byteLength)})`)
  return manifest
}

/** Reads a backup's manifest; the payload only when asked. Throws a message naming what is wrong. */
export async function readBackupFile(file: string): Promise<BackupFile> {
  const handle = await fs.promises.open(file, 'r').catch((error: NodeJS.ErrnoException) => {
    throw new Error(error.code === 'ENOENT' ? `${file} does not exist` : `cannot read ${file}: ${error.message}`)
  })
  let head: Buffer
  try {
    head = Buffer.alloc(1024 * 1024)
    const { bytesRead } = await handle.read(head, 0, head.length, 0)
    head = head.subarray(0, bytesRead)
  } finally {
    await handle.close()
  }
  const first = head.indexOf('\n')
  const second = first < 0 ? -1 : head.indexOf('\n', first + 1)
  if (first < 0 || head.subarray(0, first).toString('latin1') !== BACKUP_MAGIC || second < 0) throw new Error(`${file} is not a perpetua backup`)
  let manifest: BackupManifest
  try {
    manifest = JSON.parse(head.subarray(first + 1, second).toString('utf8')) as BackupManifest
  } catch {
    throw new Error(`${file} is not a perpetua backup (its manifest is not JSON)`)
  }
  if (manifest.format !== FORMAT) throw new Error(`${file} is a backup of format ${manifest.format}; this version of perpetua reads format ${FORMAT}`)
  const offset = second + 1
  return {
    manifest,
    async readTar() {
      const gzipped = (await fs.promises.readFile(file)).subarray(offset)
      const digest = crypto.createHash('sha256').update(gzipped).digest('hex')
      if (gzipped.byteLength !== manifest.payload.bytes || digest !== manifest.payload.sha256) {
        throw new Error(`${file} is damaged: its payload does not match its manifest (${gzipped.byteLength} bytes, expected ${manifest.payload.bytes})`)
      }
      return new Uint8Array(await promisify(zlib.gunzip)(gzipped))
    },
  }
}

export function megabytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`
}
