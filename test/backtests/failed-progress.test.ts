import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { claimJob, finishJob, recordProgress } from '../../src/backtests/queries.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'

const JOB = { template_id: 'sma_cross', params: {}, symbols: ['BTCUSDT'], timeframe: '1h', start: '2023-01-01T00:00:00Z', end: '2023-01-31T23:00:00Z', capital: '10000' }
const FAILURE = { code: 'STRATEGY_ERROR', message: 'Error: boom (atr-breakout.ts 6:53)' }

// A run's progress reaches the row at its heartbeats (every 500 ms); a run failing between two beats used to
// leave the job at its last beat's figure (0 % for a job failing within its first half second).
for (const backend of backends()) {
  describe(`a failed backtest job keeps the progress it reached (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    before(async () => {
      // A queue without workers: this test is the run, through the queries a worker's run goes through.
      t = await startTestApp(backend, {}, { replay: true, queue: 'queue' })
      key = await t.createKey(['backtests:read', 'backtests:write'])
    })
    after(() => t.close())

    const submitted = async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/jobs', JOB)
      assert.equal(created.statusCode, 200, created.body)
      const id = created.json().id as string
      assert.ok(await claimJob(t.database.handle.db, id, 1, new Date(t.clock.now())))
      return id
    }
    const shown = async (id: string) => (await t.signed(key, 'GET', `/v1/backtest/jobs/${id}`)).json()

    it("records the run's progress as it fails, ahead of its last beat", async () => {
      const id = await submitted()
      assert.ok(await recordProgress(t.database.handle.db, id, 1, 0.1))
      assert.ok(await finishJob(t.database.handle.db, id, 1, { status: 'failed', error: FAILURE, progress: 0.37 }, new Date(t.clock.now())))
      const job = await shown(id)
      assert.deepEqual([job.status, job.progress, job.error], ['failed', 0.37, FAILURE])
    })

    it('never moves it back (a re-run failing earlier than the run before it)', async () => {
      const id = await submitted()
      assert.ok(await recordProgress(t.database.handle.db, id, 1, 0.6))
      assert.ok(await finishJob(t.database.handle.db, id, 1, { status: 'failed', error: FAILURE, progress: 0.1 }, new Date(t.clock.now())))
      assert.equal((await shown(id)).progress, 0.6)
    })
  })
}
