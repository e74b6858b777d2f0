import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { pino } from 'pino'
import { trackDatabase } from '../../src/ops/database-gauges.js'
import { processRegistry, setDraining } from '../../src/ops/registry.js'
import { openTestDatabase } from '../support/database.js'

const samplesOf = (text: string, family: string) => text.split('\n').filter((line) => line.startsWith(`${family} `) || line.startsWith(`${family}{`))

describe('database gauges', () => {
  it('answer every scrape: a database that fails leaves its families without samples, logs why, and reads not ready', async () => {
    const database = await openTestDatabase('pglite')
    const lines: { level: number; msg: string }[] = []
    const log = pino({ level: 'info' }, { write: (chunk: string) => void lines.push(JSON.parse(chunk)) })
    const untrack = trackDatabase(database.handle, Date.now, log)
    try {
      const healthy = await processRegistry.metrics()
      assert.deepEqual(samplesOf(healthy, 'perpetua_ready'), ['perpetua_ready 1'])
      assert.deepEqual(samplesOf(healthy, 'perpetua_jobs_oldest_queued_seconds'), [
        'perpetua_jobs_oldest_queued_seconds{kind="backtest"} 0',
        'perpetua_jobs_oldest_queued_seconds{kind="sweep"} 0',
      ])
      assert.deepEqual(samplesOf(healthy, 'perpetua_runs_behind'), ['perpetua_runs_behind{mode="live"} 0', 'perpetua_runs_behind{mode="dry_run"} 0'])

      setDraining(true)
      const draining = await processRegistry.metrics()
      assert.deepEqual(samplesOf(draining, 'perpetua_ready'), ['perpetua_ready 0'])
      assert.deepEqual(samplesOf(draining, 'perpetua_draining'), ['perpetua_draining 1'])
      setDraining(false)

      await database.handle.close()
      const broken = await processRegistry.metrics()
      for (const family of ['perpetua_runs', 'perpetua_runs_behind', 'perpetua_jobs', 'perpetua_webhook_oldest_pending_seconds', 'perpetua_work_waiting']) {
        assert.deepEqual(samplesOf(broken, family), [], `${family} has no samples`)
        assert.match(broken, new RegExp(`^# TYPE ${family} gauge$`, 'm'))
      }
      assert.deepEqual(samplesOf(broken, 'perpetua_ready'), ['perpetua_ready 0'])
      assert.match(broken, /^process_cpu_user_seconds_total /m, 'the process families are still there')
      const errors = lines.filter((line) => line.level === 50).map((line) => line.msg)
      for (const what of ['runs', 'jobs', 'webhooks', 'readiness']) assert.ok(errors.some((msg) => msg.includes(`reading ${what} failed`)), `${what}: ${errors.join('; ')}`)
    } finally {
      untrack()
      setDraining(false)
      await database.close()
    }
  })
})
