import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { PgBoss } from 'pg-boss'
import { startQueue } from '../../src/db/queue.js'
import { backends, openTestDatabase, type TestDatabase } from '../support/database.js'

for (const backend of backends()) {
  describe(`job queue (${backend})`, () => {
    let database: TestDatabase
    let boss: PgBoss
    const errors: unknown[] = []
    before(async () => {
      database = await openTestDatabase(backend)
      boss = await startQueue(database.handle, (error) => errors.push(error))
    })
    after(async () => {
      await boss.stop({ graceful: true, timeout: 5000 })
      await database.close()
    })

    it('delivers a job sent on our pool to a worker', async () => {
      await boss.createQueue('foundation-check')
      const received: unknown[] = []
      await boss.work('foundation-check', { pollingIntervalSeconds: 0.5 }, async (jobs) => {
        for (const job of jobs) received.push(job.data)
      })
      await boss.send('foundation-check', { n: 1 })
      const deadline = Date.now() + 15_000
      while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      assert.deepEqual(received, [{ n: 1 }])
      assert.deepEqual(errors, [])
    })
  })
}
