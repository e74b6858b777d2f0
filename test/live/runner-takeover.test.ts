import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { pino } from 'pino'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { killChildren, startCli } from '../cli/cli-process.js'
import { startTestApp } from '../support/app.js'
import { tempDir } from '../support/database.js'
import { poll } from '../support/poll.js'
import { assertBacktestParity, deployFastDryRun, FAST_PARAMS, runState } from './backtest-parity.js'

const MINUTE = 60_000
const REPLAY = { speed: 300, replayStart: Date.UTC(2025, 5, 17, 6, 0, 0) }

describe('a runner whose process dies', () => {
  after(killChildren)

  it('resumes in another process within 30 s with the same position and no order twice', { skip: !process.env.TEST_DATABASE_URL }, async () => {
    const t = await startTestApp('postgres', {}, { replay: REPLAY })
    let pool: RunnerPool | undefined
    try {
      const worker = startCli(['worker'], { DATABASE_URL: t.database.url!, UPSTREAM_URL: t.replay!.url, DATA_DIR: tempDir('worker'), WORKERS: '1', LOG_LEVEL: 'info' })
      await poll('the worker to start', 60_000, () => (worker.output().stdout.includes('perpetua worker is running') ? true : undefined))
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const id = await deployFastDryRun(t, key)
      const db = t.database.handle.db
      const run = () => db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', id).executeTakeFirstOrThrow()
      const workerOwner = (await poll('the worker to claim the run', 30_000, async () => (await run()).lease_owner ?? undefined))
      await poll('the worker to hold a position', 60_000, async () => {
        const s = await runState(t, id)
        return s && s.broker.ledger.arrays.qty[0] !== 0 ? true : undefined
      })

      worker.child.kill('SIGKILL')
      await new Promise((resolve) => worker.child.once('exit', resolve))
      const killedAt = Date.now()
      const atKill = (await runState(t, id))!

      pool = new RunnerPool({ db, market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }) })
      pool.start()
      const owner = pool.owner
      await poll('this process to take the run over', 30_000, async () => ((await run()).lease_owner === owner ? true : undefined))
      const resumed = await poll('the resumed runner to act on a new bar', 30_000, async () => {
        const s = await runState(t, id)
        return s && s.broker.lastOpenTime! > atKill.broker.lastOpenTime! ? s : undefined
      })
      const elapsed = Date.now() - killedAt
      assert.ok(elapsed < 30_000, `resumed after ${elapsed} ms`)
      assert.notEqual(owner, workerOwner)
      assert.ok(resumed.warmupFrom === atKill.warmupFrom, 'the same run, not a new warm-up')

      // Ten more bars, then the whole run must still be the backtest's: the same position carried over,
      // every bar acted on once (a duplicate or lost order would change the trades or the position).
      await poll('ten more bars', 30_000, async () => {
        const s = await runState(t, id)
        return s && s.broker.lastOpenTime! >= atKill.broker.lastOpenTime! + 10 * MINUTE ? true : undefined
      })
      await pool.stop()
      pool = undefined
      await assertBacktestParity(t, id, { params: FAST_PARAMS, capital: 1000, leverage: 1 })
      const filled = await db.selectFrom('strategy_orders').select('filled_at').where('strategy_id', '=', id).where('status', '=', 'filled').execute()
      assert.equal(new Set(filled.map((o) => o.filled_at!.getTime())).size, filled.length, 'no bar filled two orders')
      process.stdout.write(`# takeover: resumed ${elapsed} ms after the kill\n`)
    } finally {
      await pool?.stop()
      await t.close()
    }
  })
})
