import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { dispatchWanted } from '../../src/webhooks/delivery-queries.js'
import { backends, openTestDatabase, type TestDatabase } from '../support/database.js'

for (const backend of backends()) {
  describe(`the webhook sweep's look (${backend})`, () => {
    let database: TestDatabase
    before(async () => {
      database = await openTestDatabase(backend)
    })
    after(() => database.close())

    it('finds an event not fanned out and a due pending delivery, and nothing else', async () => {
      const db = database.handle.db
      const now = new Date('2026-11-30T12:00:00Z')
      assert.equal(await dispatchWanted(db, now), false, 'an empty database')
      const { id: userId } = await db.insertInto('users').values({ email: 'sweep@example.test' }).returning('id').executeTakeFirstOrThrow()
      await sql`INSERT INTO events (id, user_id, type, data, created_at) VALUES ('evt_1', ${userId}, 'backtest.job_done', '{}', ${now})`.execute(db)
      assert.equal(await dispatchWanted(db, now), true, 'an event no node has fanned out')
      await sql`UPDATE events SET fanned_out_at = ${now}`.execute(db)
      assert.equal(await dispatchWanted(db, now), false, 'every event fanned out')

      await sql`INSERT INTO webhooks (id, user_id, url, events, secret_enc, created_at, updated_at) VALUES ('wh_1', ${userId}, 'https://example.test/hook', '{*}', 'x', ${now}, ${now})`.execute(db)
      const later = new Date(now.getTime() + 5_000)
      await sql`INSERT INTO deliveries (webhook_id, event_id, event_type, next_attempt_at, created_at, updated_at) VALUES ('wh_1', 'evt_1', 'backtest.job_done', ${later}, ${now}, ${now})`.execute(db)
      assert.equal(await dispatchWanted(db, now), false, 'a retry not yet due')
      assert.equal(await dispatchWanted(db, later), true, 'the retry due')
      await sql`UPDATE deliveries SET next_attempt_at = NULL`.execute(db)
      assert.equal(await dispatchWanted(db, later), false, 'a held delivery (out of the due index)')
      await sql`UPDATE deliveries SET state = 'failed', next_attempt_at = ${now}`.execute(db)
      assert.equal(await dispatchWanted(db, later), false, 'a delivery given up')
    })
  })
}
