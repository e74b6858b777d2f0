import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { decodeResult } from '../../src/backtests/result-codec.js'
import { startTestApp, type TestApp } from '../support/app.js'
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

  it('runs backtests submitted to a serve node sharing its PostgreSQL server, counts them on its metrics listener, and stops on SIGTERM', { skip: !process.env.TEST_DATABASE_URL }, async () => {
    const t = await startTestApp('postgres', {}, { replay: true, queue: 'queue' })
    try {
      const worker = startCli(['worker'], {
        DATABASE_URL: t.database.url!,
        UPSTREAM_URL: t.replay!.url,
        DATA_DIR: tempDir('worker'),
        WORKERS: '1',
        LOG_LEVEL: 'info',
        METRICS_ADDR: '127.0.0.1:0',
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
      const listening = worker.output().stdout.split('\n').find((line) => line.includes('metrics listener is serving'))
      assert.ok(listening, worker.output().stdout)
      const scrape = await (await fetch((JSON.parse(listening) as { metrics_url: string }).metrics_url)).text()
      assert.match(scrape, /^perpetua_job_duration_seconds_count\{kind="backtest",outcome="done"\} 1$/m, 'the worker ran the job')
      assert.match(scrape, /^perpetua_ready 1$/m)
      worker.child.kill('SIGTERM')
      const code = await new Promise((resolve) => worker.child.once('exit', resolve))
      assert.equal(code, 0, worker.output().stderr)
    } finally {
      await t.close()
    }
  })

  it('runs a backtest again on a live worker within seconds when its worker is killed mid-run', { skip: !process.env.TEST_DATABASE_URL }, async (context) => {
    const t = await startTestApp('postgres', {}, { replay: true, queue: 'queue' })
    const startWorker = workerStarter(t)
    try {
      const doomed = await startWorker()
      const { key, body, id, row, slow } = await slowBacktest(t)
      await poll('the first run to start', 60_000, async () => ((await row()).status === 'running' ? true : undefined))
      const survivor = await startWorker() // started while the first run is alive: it must not take the job over
      const before = await row()
      assert.deepEqual([before.status, before.attempt], ['running', 1], 'the first run is still going when its worker is killed')
      doomed.child.kill('SIGKILL')
      const killedAt = Date.now()
      slow()
      const handedOver = await poll('the lost run to be handed over', 30_000, async () => ((await row()).attempt === 2 ? Date.now() : undefined))
      const rerunStarted = await poll('the re-run to start', 30_000, async () => {
        const now = await row()
        return now.attempt === 2 && now.heartbeat_at !== null ? Date.now() : undefined
      })
      const done = await poll('the re-run to finish', 60_000, async () => {
        const now = await row()
        return now.status === 'running' ? undefined : { ...now, at: Date.now() }
      })
      assert.equal(done.status, 'done', JSON.stringify(done.error))
      assert.equal(done.attempt, 2)
      const figures = { detectedMs: handedOver - killedAt, rerunStartedMs: rerunStarted - killedAt, doneMs: done.at - killedAt }
      context.diagnostic(`worker killed mid-backtest: ${JSON.stringify(figures)}`)
      assert.ok(figures.detectedMs < 10_000, `the loss was found after ${figures.detectedMs} ms`)
      // The same job submitted afresh (history now stored) gives the same result: the re-run was a real run.
      const again = (await t.signed(key, 'POST', '/v1/backtest/jobs', body)).json().id as string
      const results = await poll('the fresh run to finish', 60_000, async () => {
        const rows = await t.database.handle.db.selectFrom('backtest_jobs').select(['id', 'status', 'result']).where('id', 'in', [id, again]).execute()
        return rows.every((r) => r.status === 'done') ? rows : undefined
      })
      assert.deepEqual(decodeResult(results[0]!.result!), decodeResult(results[1]!.result!))
      // The node that found the loss counted it; whichever node ran the re-run timed it.
      const scrape = async (worker: typeof survivor) => {
        const listening = worker.output().stdout.split('\n').find((line) => line.includes('metrics listener is serving'))
        return listening ? (await fetch((JSON.parse(listening) as { metrics_url: string }).metrics_url)).text() : ''
      }
      const text = await scrape(survivor)
      assert.match(text, /^perpetua_jobs_worker_lost_total\{kind="backtest"\} 1$/m)
      assert.match(text, /^perpetua_jobs_retried_total\{kind="backtest"\} 1$/m)
      assert.match(text, /^perpetua_job_duration_seconds_count\{kind="backtest",outcome="done"\} 2$/m)
      survivor.child.kill('SIGTERM')
      assert.equal(await new Promise((resolve) => survivor.child.once('exit', resolve)), 0, survivor.output().stderr)
    } finally {
      await t.close()
    }
  })

  it('hands a backtest in flight back to the queue on SIGTERM: another worker runs it at once, at the same attempt', { skip: !process.env.TEST_DATABASE_URL }, async (context) => {
    const t = await startTestApp('postgres', {}, { replay: true, queue: 'queue' })
    const startWorker = workerStarter(t)
    try {
      const stopping = await startWorker()
      const { row, slow } = await slowBacktest(t)
      await poll('the run to start', 60_000, async () => ((await row()).status === 'running' ? true : undefined))
      const other = await startWorker()
      const running = await row()
      assert.deepEqual([running.status, running.attempt], ['running', 1], 'still running when its worker is stopped')
      stopping.child.kill('SIGTERM')
      const signalledAt = Date.now()
      assert.equal(await new Promise((resolve) => stopping.child.once('exit', resolve)), 0, stopping.output().stderr)
      const exitedMs = Date.now() - signalledAt
      slow()
      // The same attempt: handed back, not found lost (recovery would have made it attempt 2, after 5 s of silence).
      const done = await poll('the handed-back run to finish on the other worker', 90_000, async () => {
        const now = await row()
        return now.status === 'done' || now.status === 'failed' ? now : undefined
      })
      assert.equal(done.status, 'done', JSON.stringify(done.error))
      assert.equal(done.attempt, 1)
      context.diagnostic(`worker SIGTERMed mid-backtest: exited after ${exitedMs} ms`)
      assert.ok(exitedMs < 10_000, `the stopping worker did not wait for the backtest: exited after ${exitedMs} ms`)
      other.child.kill('SIGTERM')
      assert.equal(await new Promise((resolve) => other.child.once('exit', resolve)), 0, other.output().stderr)
    } finally {
      await t.close()
    }
  })
})

/** Starts `perpetua worker` processes on the test app's database and replay; each resolves once it runs. */
function workerStarter(t: TestApp) {
  // Each worker's metrics listener on a port of its own (the test reads the lost job's counters from it).
  const env = { DATABASE_URL: t.database.url!, UPSTREAM_URL: t.replay!.url, WORKERS: '1', LOG_LEVEL: 'info', METRICS_ADDR: '127.0.0.1:0' }
  return async () => {
    const worker = startCli(['worker'], { ...env, DATA_DIR: tempDir('worker') })
    await poll('a worker to start', 60_000, () => (worker.output().stdout.includes('perpetua worker is running backtests') ? true : undefined))
    return worker
  }
}

/**
 * A five-year 1h backtest whose history pages the replay serves slowly (500 ms each, about 15 s for 30 pages), so
 * a stop lands mid-run; `slow()` ends the slowness. `row()` reads the job.
 */
async function slowBacktest(t: TestApp) {
  const slow = t.replay!.faults.add({ path: '/fapi/v1/klines', latencyMs: 500 })
  const key = await t.createKey(['backtests:read', 'backtests:write'])
  const body = { template_id: 'sma_cross', params: {}, symbols: ['BTCUSDT'], timeframe: '1h', start: '2020-06-01T00:00:00Z', end: '2025-05-31T23:00:00Z', capital: '10000' }
  const created = await t.signed(key, 'POST', '/v1/backtest/jobs', body)
  assert.equal(created.statusCode, 200, created.body)
  const id = created.json().id as string
  const row = () => t.database.handle.db.selectFrom('backtest_jobs').select(['status', 'attempt', 'heartbeat_at', 'progress', 'error']).where('id', '=', id).executeTakeFirstOrThrow()
  return { key, body, id, row, slow }
}
