import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

/**
 * MASTER_KEY and APP_JWT_SECRET, when not configured, are generated once into DATA_DIR (mode 0600)
 * so an embedded install keeps working across restarts. Several nodes on one database must set them.
 */
/** The key in effect without creating one: `configured`, else the one kept in DATA_DIR, else none. */
export function findKey(configured: Buffer | undefined, dataDir: string, fileName: string): Buffer | undefined {
  if (configured) return configured
  try {
    const existing = Buffer.from(fs.readFileSync(path.join(dataDir, fileName), 'utf8').trim(), 'base64')
    return existing.length === 32 ? existing : undefined
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

export function loadOrCreateKey(configured: Buffer | undefined, dataDir: string, fileName: string): Buffer {
  if (configured) return configured
  const file = path.join(dataDir, fileName)
  try {
    const existing = Buffer.from(fs.readFileSync(file, 'utf8').trim(), 'base64')
    if (existing.length === 32) return existing
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  fs.mkdirSync(dataDir, { recursive: true })
  const key = crypto.randomBytes(32)
  try {
    fs.writeFileSync(file, `${key.toString('base64')}\n`, { flag: 'wx', mode: 0o600 })
    return key
  } catch (error) {
    // Another process created it first: use theirs.
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return loadOrCreateKey(undefined, dataDir, fileName)
    throw error
  }
}
