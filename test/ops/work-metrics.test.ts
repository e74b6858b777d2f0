import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { insertJob } from '../../src/backtests/queries.js'
import { AppError } from '../../src/http/errors.js'
import { pino } from 'pino'
import { trackDatabase } from '../../src/ops/database-gauges.js'
import { processRegistry } from '../../src/ops/registry.js'
import { countRejections, type SandboxRejections } from '../../src/ops/work-metrics.js'
import { createStrategySandbox } from '../../src/custom-templates/sandbox/sandbox-service.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'

const value = (body: string, line: string) => body.split('\n').find((l) => l.startsWith(`${line} `))?.slice(line.length + 1)

for (const backend of backends()) {
  describe(`the operator's fairness metrics (${backend})`, () => {
    let t: TestApp
    let untrack: () => void
    before(async () => {
      t = await startTestApp(backend)
      untrack = trackDatabase(t.database.handle, t.clock.now, pino({ level: 'silent' }))
    })
    after(async () => {
      untrack()
      await t.close()
    })

    it('counts engine work waiting and the oldest wait by kind and user plan', async () => {
      const db = t.database.handle.db
      await t.createKey(['backtests:read'], 'waiting-pro@example.test')
      const user = await db.selectFrom('users').select('id').where('email', '=', 'waiting-pro@example.test').executeTakeFirstOrThrow()
      await db.updateTable('users').set({ plan: 'pro' }).where('id', '=', user.id).execute()
      const submittedAt = new Date(Date.now() - 60_000)
      for (const id of ['bt_wait1', 'bt_wait2']) await insertJob(db, { id, userId: user.id, templateId: 'sma_cross', config: {}, submittedAt })
      const body = await processRegistry.metrics()
      assert.equal(value(body, 'perpetua_work_waiting{kind="job",plan="pro"}'), '2')
      const oldest = Number(value(body, 'perpetua_work_oldest_wait_seconds{kind="job",plan="pro"}'))
      assert.ok(oldest >= 59, `the oldest waited ${oldest} s`)
      assert.equal(value(body, 'perpetua_work_waiting{kind="sweep_task",plan="pro"}'), undefined, 'no sweep task waits')
      assert.equal(value(body, 'perpetua_sandbox_calls_rejected_total'), '0')
    })
  })
}

describe('sandbox calls refused for their user’s limit', () => {
  it('are counted, and no other failure is', async () => {
    const rejections: SandboxRejections = { total: 0 }
    const sandbox = countRejections(createStrategySandbox(1), rejections)
    try {
      // A module whose inspection spins a while: one call of the user's runs, four wait, the sixth is refused.
      const slow = 'export function create() { let x = 0; for (let i = 0; i < 3e6; i++) x += i; return { onBar() { return NaN } } }'
      const calls = Array.from({ length: 6 }, () => sandbox.inspect(7, slow, 'javascript'))
      const settled = await Promise.allSettled(calls)
      const refused = settled.filter((one) => one.status === 'rejected' && one.reason instanceof AppError && one.reason.code === 'RATE_LIMITED')
      assert.equal(refused.length, 1)
      await assert.rejects(sandbox.inspect(8, 'not a module', 'javascript'), (error: unknown) => error instanceof AppError && error.code === 'INVALID_PARAMETER')
      assert.equal(rejections.total, 1)
      assert.match(await processRegistry.metrics(), /^perpetua_sandbox_calls_rejected_total 1$/m)
    } finally {
      await sandbox.close()
    }
  })
})
