import assert from 'node:assert/strict'
import fs from 'node:fs'
import { after, describe, it } from 'node:test'
import { sql } from 'kysely'
import { loadConfig } from '../src/config.js'
import { inspectLock } from '../src/db/data-dir-lock.js'
import { beginOpeningStorage } from '../src/storage.js'
import { tempDir } from './support/database.js'

describe('beginOpeningStorage (embedded)', () => {
  const dirs: string[] = []
  const config = () => {
    const dataDir = tempDir('storage')
    dirs.push(dataDir)
    return loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' })
  }
  after(() => {
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true })
  })

  it('hands out the database at once, takes queries once opened, and releases the lock on close', async () => {
    const settings = config()
    const opening = beginOpeningStorage(settings, 'serve')
    assert.equal(opening.database.kind, 'embedded')
    assert.deepEqual(inspectLock(settings.dataDir), { held: true, pid: process.pid })
    const storage = await opening.opened
    assert.ok(storage.migrationsApplied.length > 0)
    assert.equal(storage.database, opening.database)
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from kysely_migration`.execute(opening.database.db)
    assert.equal(rows[0]!.n, storage.migrationsApplied.length)
    await storage.close()
    assert.deepEqual(inspectLock(settings.dataDir), { held: false })
  })

  it('closes while the database is still opening: the opening fails, the lock is free and the folder opens again', async () => {
    const settings = config()
    const opening = beginOpeningStorage(settings, 'serve')
    await opening.close()
    await assert.rejects(opening.opened)
    assert.deepEqual(inspectLock(settings.dataDir), { held: false })
    const again = await beginOpeningStorage(settings, 'serve').opened
    await again.close()
  })

  it('refuses a data dir another opening holds, before starting anything', async () => {
    const settings = config()
    const first = beginOpeningStorage(settings, 'serve')
    assert.throws(() => beginOpeningStorage(settings, 'migrate'), /in use by another perpetua process/)
    await (await first.opened).close()
  })
})
