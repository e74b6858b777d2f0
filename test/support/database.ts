import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js'
import { acquireLock } from '../../src/db/data-dir-lock.js'
import { migrateToLatest } from '../../src/db/migrate.js'

export type Backend = 'pglite' | 'postgres'

/**
 * The databases every storage test runs against: always the embedded PGlite, and the real
 * PostgreSQL server too when TEST_DATABASE_URL is set (as .ci/run does).
 */
export function backends(): Backend[] {
  return process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite']
}

export interface TestDatabase {
  handle: DatabaseHandle
  dataDir: string
  /** The server database's URL (postgres backend only). */
  url: string | undefined
  close(): Promise<void>
}

export function tempDir(label: string): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), `perpetua-${label}-`))
}

/**
 * A fresh, migrated database of its own for one test file. `poolMax` (server only) gives the pool more
 * connections, for tests of concurrent transactions (PGlite serialises them whatever the pool).
 */
export async function openTestDatabase(backend: Backend, options: { poolMax?: number } = {}): Promise<TestDatabase> {
  const dataDir = tempDir('test')
  if (backend === 'pglite') {
    const lock = acquireLock(dataDir, 'test')
    const handle = await connectDatabase({ databaseUrl: undefined, dataDir, poolMax: 1 })
    await migrateToLatest(handle.db as never)
    return {
      handle,
      dataDir,
      url: undefined,
      async close() {
        await handle.close()
        lock.release()
        fs.rmSync(dataDir, { recursive: true, force: true })
      },
    }
  }
  const url = await createServerDatabase()
  // Pool max 1 on the server too (unless a test of concurrency asks for more): a query that bypasses its
  // transaction handle deadlocks here as it would on PGlite, instead of passing by luck on a larger pool.
  const handle = await connectDatabase({ databaseUrl: url, dataDir, poolMax: options.poolMax ?? 1 })
  await migrateToLatest(handle.db as never)
  return {
    handle,
    dataDir,
    url,
    async close() {
      await handle.close()
      await dropServerDatabase(url)
      fs.rmSync(dataDir, { recursive: true, force: true })
    },
  }
}

/** Creates an empty database on the TEST_DATABASE_URL server (or `admin`'s) and returns its URL. */
export async function createServerDatabase(admin = process.env.TEST_DATABASE_URL): Promise<string> {
  if (!admin) throw new Error('TEST_DATABASE_URL is not set')
  const name = `perpetua_test_${crypto.randomBytes(6).toString('hex')}`
  const client = new pg.Client({ connectionString: admin })
  await client.connect()
  try {
    await client.query(`CREATE DATABASE ${name}`)
  } finally {
    await client.end()
  }
  const url = new URL(admin)
  url.pathname = `/${name}`
  return url.toString()
}

export async function dropServerDatabase(url: string, admin = process.env.TEST_DATABASE_URL): Promise<void> {
  if (!admin) return
  const name = new URL(url).pathname.slice(1)
  const client = new pg.Client({ connectionString: admin })
  await client.connect()
  try {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  } finally {
    await client.end()
  }
}
