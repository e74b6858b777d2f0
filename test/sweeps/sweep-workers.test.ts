import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { startTestApp } from '../support/app.js'
import { tempDir } from '../support/database.js'
import { killChildren, poll, startCli } from '../cli/cli-process.js'

describe('a sweep over two perpetua worker processes', () => {
  after(killChildren)

  it('survives a SIGKILL of one worker mid-sweep: every configuration runs, and is stored exactly once', { skip: !process.env.TEST_DATABASE_URL }, async (context) => {
    const t = await startTestApp('postgres', {}, { replay: true, queue: 'queue' })
    const env = { DATABASE_URL: t.database.url!, UPSTREAM_URL: t.replay!.url, WORKERS: '1', LOG_LEVEL: 'info' }
    const startWorker = async () => {
      const worker = startCli(['worker'], { ...env, DATA_DIR: tempDir('sweep-worker') })
      await poll('a worker to start', 60_000, () => (worker.output().stdout.includes('perpetua worker is running backtests') ? true : undefined))
      return worker
    }
    try {
      const [doomed, survivor] = await Promise.all([startWorker(), startWorker()])
      const key = await t.createKey(['backtests:read', 'backtests:write'])
      const fast = Array.from({ length: 12 }, (_, i) => 5 + 5 * i)
      const slow = [70, 90, 110, 130, 150, 170, 190, 210, 230, 250]
      const body = {
        base: { template_id: 'sma_cross', symbols: ['BTCUSDT'], timeframe: '1h', start: '2020-06-01T00:00:00Z', end: '2025-05-31T23:00:00Z', capital: '10000' },
        grid: { fast, slow },
      }
      const created = await t.signed(key, 'POST', '/v1/backtest/sweeps', body)
      assert.equal(created.statusCode, 202, created.body)
      const id = created.json().id as string
      const total = fast.length * slow.length
      const sweepRow = () => t.database.handle.db.selectFrom('backtest_sweeps').select(['status', 'runs_done', 'error']).where('id', '=', id).executeTakeFirstOrThrow()
      const tasksOf = () => t.database.handle.db.selectFrom('backtest_sweep_tasks').select(['task_no', 'kind', 'status', 'attempt']).where('sweep_id', '=', id).execute()
      // Both workers hold tasks once a few runs are stored; the kill lands mid-sweep.
      await poll('runs to be stored', 120_000, async () => ((await sweepRow()).runs_done >= 10 ? true : undefined))
      const before = await sweepRow()
      assert.ok(before.runs_done < total, `the sweep is still going when a worker is killed (${before.runs_done} of ${total})`)
      doomed.child.kill('SIGKILL')
      const killedAt = Date.now()
      const done = await poll('the sweep to end', 180_000, async () => {
        const row = await sweepRow()
        return row.status === 'queued' || row.status === 'running' ? undefined : row
      })
      assert.equal(done.status, 'done', JSON.stringify(done.error))

      const runs = await t.database.handle.db.selectFrom('backtest_sweep_runs').select('run_no').where('sweep_id', '=', id).orderBy('run_no').execute()
      assert.deepEqual(
        runs.map((run) => run.run_no),
        Array.from({ length: total }, (_, i) => i + 1),
      )
      assert.equal(done.runs_done, total, 'each run counted once')
      const tasks = await tasksOf()
      assert.ok(
        tasks.every((task) => task.status === 'done'),
        JSON.stringify(tasks.filter((task) => task.status !== 'done')),
      )
      const rerun = tasks.filter((task) => task.attempt === 2)
      assert.ok(rerun.length > 0, 'a task the killed worker held ran again on the survivor')
      context.diagnostic(`killed with ${before.runs_done}/${total} runs stored; ${rerun.length} task(s) re-run; ended ${Date.now() - killedAt} ms after the kill`)
      // The runs are the same as a single backtest's: one of the re-run tasks' configurations, checked.
      const runsPage = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${id}/runs?limit=1000`)).json()
      assert.equal(runsPage.data.length, total)
      survivor.child.kill('SIGTERM')
      assert.equal(await new Promise((resolve) => survivor.child.once('exit', resolve)), 0, survivor.output().stderr)
    } finally {
      await t.close()
    }
  })
})
