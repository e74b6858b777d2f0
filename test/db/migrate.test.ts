import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { type Kysely, sql } from 'kysely'
import { migrateToLatest } from '../../src/db/migrate.js'
import { backends, openTestDatabase, type TestDatabase } from '../support/database.js'

const MIGRATIONS = fs
  .readdirSync(path.resolve(import.meta.dirname, '../../src/db/migrations'))
  .filter((name) => name.endsWith('.sql'))
  .map((name) => name.replace(/\.sql$/, ''))
  .sort()

for (const backend of backends()) {
  describe(`migrateToLatest (${backend})`, () => {
    let database: TestDatabase
    let db: Kysely<unknown>
    before(async () => {
      database = await openTestDatabase(backend) // migrated once already
      db = database.handle.db as never
    })
    after(() => database.close())

    it('finds nothing to apply on a database that has every migration', async () => {
      const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)
      assert.deepEqual(
        rows.map((row) => row.name),
        MIGRATIONS,
      )
      assert.deepEqual(await migrateToLatest(db), [])
    })

    it('leaves a migration the files do not know to the migrator, which refuses it', async () => {
      await sql`insert into kysely_migration (name, timestamp) values ('9999_from_a_newer_build', '2026-01-01T00:00:00.000Z')`.execute(db)
      try {
        await assert.rejects(migrateToLatest(db), /corrupted migrations|9999_from_a_newer_build/)
      } finally {
        await sql`delete from kysely_migration where name = '9999_from_a_newer_build'`.execute(db)
      }
      assert.deepEqual(await migrateToLatest(db), [])
    })
  })
}
