import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { startTestApp } from '../support/app.js'
import { tempDir } from '../support/database.js'
import { killChildren, poll, runCli, startCli } from './cli-process.js'

describe('perpetua worker', () => {
  after(killChildren)

  it('refuses to start without DATABASE_URL, naming it', async () => {
    const result = await runCli(['worker'], { DATA_DIR: tempDir('worker') })
    assert.notEqual(result.code, 0)
    assert.match(result.stderr, /DATABASE_URL/)
    assert.equal(result.stdout, '')
  })

  it('runs backtests submitted to a serve node sharing its PostgreSQL server, and stops on SIGTERM', { skip: !process.env.TEST_DATABASE_URL }, async () => {
    const t = await startTestApp('postgres', {}, { replay: true, queue: 'queue' })
    try {
      const worker = startCli(['worker'], {
        DATABASE_URL: t.database.url!,
        UPSTREAM_URL: t.replay!.url,
        DATA_DIR: tempDir('worker'),
        WORKERS: '1',
        LOG_LEVEL: 'info',
      })
      await poll('the worker to start', 60_000, () => (worker.output().stdout.includes('perpetua worker is running backtests') ? true : undefined))
      const key = await t.createKey(['backtests:read', 'backtests:write'])
      const body = { template_id: 'sma_cross', params: {}, symbols: ['BTCUSDT'], timeframe: '1h', start: '2023-01-01T00:00:00Z', end: '2023-02-28T23:00:00Z', capital: '10000' }
      const id = (await t.signed(key, 'POST', '/v1/backtest/jobs', body)).json().id as string
      const done = await poll('the job to finish', 60_000, async () => {
        const row = await t.database.handle.db.selectFrom('backtest_jobs').select(['status', 'error']).where('id', '=', id).executeTakeFirst()
        return row && row.status !== 'queued' && row.status !== 'running' ? row : undefined
      })
      assert.equal(done.status, 'done', JSON.stringify(done.error))
      worker.child.kill('SIGTERM')
      const code = await new Promise((resolve) => worker.child.once('exit', resolve))
      assert.equal(code, 0, worker.output().stderr)
    } finally {
      await t.close()
    }
  })
})
