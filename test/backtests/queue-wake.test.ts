import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { startWork } from '../../src/work/start-work.js'
import { workHandlers } from '../../src/work-handlers.js'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.js'
import { startQueue } from '../../src/db/queue.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { SMA_CROSS_JOB } from '../support/backtest-job.js'
import { backends } from '../support/database.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'

/** Far longer than the waits below: a worker that only polled would not see the work in time. */
const POLL_SECONDS = 600
const WITHIN_MS = 60_000

/**
 * A job or sweep created on one node (the API, no workers) wakes another node's workers at its commit
 * (queue.ts's pg_notify and listenForQueued), instead of waiting for their next poll. The workers here
 * get no in-process signal and poll every 10 minutes, so only the notification can start them in time.
 */
for (const backend of backends()) {
  describe(`queued work wakes workers on other nodes (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    let other: DatabaseHandle | undefined
    let stopWorkers = async () => undefined as void
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'queue' })
      key = await t.createKey(['backtests:read', 'backtests:write'])
      // The other node: its own connections (the server), or the one embedded database it shares.
      other = backend === 'postgres' ? await connectDatabase({ databaseUrl: t.database.url!, dataDir: t.database.dataDir, poolMax: 2 }) : undefined
      const database = other ?? t.database.handle
      const boss = await startQueue(database, () => undefined)
      const deps = { db: database.db, database, boss, market: t.services.market, now: Date.now, log: pino({ level: 'silent' }), workers: 1, historyCacheMb: 64, pollSeconds: POLL_SECONDS }
      const workers = await startWork(deps, workHandlers())
      stopWorkers = async () => {
        await workers.stop()
        await boss.stop({ graceful: false, timeout: 2000 })
        await other?.close()
      }
    })
    after(async () => {
      await stopWorkers()
      await t.close()
    })

    it('runs a backtest job created on the API node', async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/jobs', SMA_CROSS_JOB)
      assert.equal(created.statusCode, 200, created.body)
      const id = created.json().id as string
      const status = await poll('the job to end', WITHIN_MS, async () => {
        const row = await t.database.handle.db.selectFrom('backtest_jobs').select('status').where('id', '=', id).executeTakeFirstOrThrow()
        return row.status === 'queued' || row.status === 'running' ? undefined : row.status
      })
      assert.equal(status, 'done')
    })

    it('runs every task of a sweep created on the API node, its statistics included', async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/sweeps', {
        base: { template_id: 'sma_cross', symbols: ['BTCUSDT'], timeframe: '1h', start: '2023-01-01T00:00:00Z', end: '2023-06-30T23:00:00Z', capital: '10000' },
        grid: { fast: [5, 10, 15, 20, 25, 30], slow: [40, 50, 60, 70, 80] },
      })
      assert.equal(created.statusCode, 202, created.body)
      const id = created.json().id as string
      const row = await poll('the sweep to end', WITHIN_MS, async () => {
        const sweep = await t.database.handle.db.selectFrom('backtest_sweeps').select(['status', 'runs_done', 'error']).where('id', '=', id).executeTakeFirstOrThrow()
        return sweep.status === 'queued' || sweep.status === 'running' ? undefined : sweep
      })
      assert.equal(row.status, 'done', JSON.stringify(row.error))
      assert.equal(row.runs_done, 30)
    })
  })
}
