import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { after, describe, it } from 'node:test'
import { pino } from 'pino'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { signIn } from '../auth/bearer.js'
import { killChildren, startCli } from '../cli/cli-process.js'
import { startTestApp } from '../support/app.js'
import { tempDir } from '../support/database.js'
import { poll } from '../support/poll.js'
import { assertBacktestParity, deployFastDryRun, FAST_PARAMS, runState } from './backtest-parity.js'
import { account, hex, liveHarness, nothingPending } from './live-accounts.js'

const MINUTE = 60_000
const REPLAY = { speed: 300, replayStart: Date.UTC(2025, 5, 17, 6, 0, 0) }

describe('a runner whose process dies', () => {
  after(killChildren)

  it('resumes one- and many-symbol dry runs in another process within 30 s with the same positions and no order twice', { skip: !process.env.TEST_DATABASE_URL }, async () => {
    const t = await startTestApp('postgres', {}, { replay: REPLAY })
    let pool: RunnerPool | undefined
    try {
      const worker = startCli(['worker'], { DATABASE_URL: t.database.url!, UPSTREAM_URL: t.replay!.url, DATA_DIR: tempDir('worker'), WORKERS: '1', LOG_LEVEL: 'info' })
      await poll('the worker to start', 60_000, () => (worker.output().stdout.includes('perpetua worker is running') ? true : undefined))
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const id = await deployFastDryRun(t, key)
      const momentum = { lookback: 5, rebalance_every: 3, long_count: 1, short_count: 1 }
      const created = await t.signed(key, 'POST', '/v1/strategies', { name: 'm', template_id: 'cross_sectional_momentum', params: momentum, symbols: ['BTCUSDT', 'ETHUSDT'], timeframe: '1m', capital: '3000', leverage: 1 })
      const multi = created.json().id as string
      assert.equal((await t.signed(key, 'POST', `/v1/strategies/${multi}/deploy`, { dry_run: true })).statusCode, 200)
      const db = t.database.handle.db
      const run = () => db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', id).executeTakeFirstOrThrow()
      const multiRun = () => db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', multi).executeTakeFirstOrThrow()
      const workerOwner = (await poll('the worker to claim the run', 30_000, async () => (await run()).lease_owner ?? undefined))
      await poll('the worker to claim the many-symbol run', 30_000, async () => ((await multiRun()).lease_owner === workerOwner ? true : undefined))
      await poll('the worker to hold a position in both runs', 60_000, async () => {
        const s = await runState(t, id)
        const m = await runState(t, multi)
        return s && s.broker.ledger.arrays.qty[0] !== 0 && m && m.broker.ledger.arrays.qty.some((q) => q !== 0) ? true : undefined
      })

      worker.child.kill('SIGKILL')
      await new Promise((resolve) => worker.child.once('exit', resolve))
      const killedAt = Date.now()
      const atKill = (await runState(t, id))!
      const multiAtKill = (await runState(t, multi))!

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
      const multiResumed = await poll('the resumed many-symbol runner to act on a new step', 30_000 - (Date.now() - killedAt), async () => {
        const s = await runState(t, multi)
        return (await multiRun()).lease_owner === owner && s && s.broker.lastOpenTime! > multiAtKill.broker.lastOpenTime! ? s : undefined
      })
      const multiElapsed = Date.now() - killedAt
      assert.equal(multiResumed.warmupFrom, multiAtKill.warmupFrom, 'the same many-symbol run, not a new warm-up')
      assert.notEqual(owner, workerOwner)
      assert.ok(resumed.warmupFrom === atKill.warmupFrom, 'the same run, not a new warm-up')

      // Ten more bars, then the whole run must still be the backtest's: the same position carried over,
      // every bar acted on once (a duplicate or lost order would change the trades or the position).
      await poll('ten more bars', 30_000, async () => {
        const s = await runState(t, id)
        const m = await runState(t, multi)
        return s && s.broker.lastOpenTime! >= atKill.broker.lastOpenTime! + 10 * MINUTE && m && m.broker.lastOpenTime! >= multiAtKill.broker.lastOpenTime! + 10 * MINUTE ? true : undefined
      })
      await pool.stop()
      pool = undefined
      await assertBacktestParity(t, id, { params: FAST_PARAMS, capital: 1000, leverage: 1 })
      await assertBacktestParity(t, multi, { templateId: 'cross_sectional_momentum', params: momentum, capital: 3000, leverage: 1, symbols: ['BTCUSDT', 'ETHUSDT'] })
      for (const strategy of [id, multi]) {
        const filled = await db.selectFrom('strategy_orders').select(['symbol', 'filled_at']).where('strategy_id', '=', strategy).where('status', '=', 'filled').execute()
        assert.equal(new Set(filled.map((o) => `${o.symbol} ${o.filled_at!.getTime()}`)).size, filled.length, 'no bar of a symbol filled two orders')
      }
      process.stdout.write(`# takeover: resumed ${elapsed} ms (one symbol) and ${multiElapsed} ms (two symbols) after the kill\n`)
    } finally {
      await pool?.stop()
      await t.close()
    }
  })

  it('one- and many-symbol live runs killed while their orders are in flight resume in another process within 30 s: one exchange order per intent, the same positions, every account flat after pause with close_positions', { skip: !process.env.TEST_DATABASE_URL }, async () => {
    const momentum = { lookback: 5, rebalance_every: 3, long_count: 1, short_count: 1 }
    // A one-symbol run and a two-symbol run, each on its own account (its own exchange key).
    const runs = [
      { name: 'one', trader: account('TAKEOVER'), symbols: ['BTCUSDT'], fields: {} },
      { name: 'many', trader: account('MTAKEOVER'), symbols: ['BTCUSDT', 'ETHUSDT'], fields: { template_id: 'cross_sectional_momentum', params: momentum, symbols: ['BTCUSDT', 'ETHUSDT'], capital: '2000' } },
    ]
    // The worker must open the exchange keys the app sealed: both hold one master key.
    const masterKey = crypto.randomBytes(32).toString('base64')
    const t = await startTestApp('postgres', { MASTER_KEY: masterKey }, { replay: { speed: 120, replayStart: REPLAY.replayStart, accounts: runs.map((r) => ({ ...r.trader, balances: { USDT: '10000' } })) } })
    let pool: RunnerPool | undefined
    try {
      const worker = startCli(['worker'], { DATABASE_URL: t.database.url!, UPSTREAM_URL: t.replay!.url, DATA_DIR: tempDir('worker'), WORKERS: '1', LOG_LEVEL: 'info', MASTER_KEY: masterKey })
      await poll('the worker to start', 60_000, () => (worker.output().stdout.includes('perpetua worker is running') ? true : undefined))
      const user = await signIn(t)
      const live = liveHarness(
        () => t,
        () => user,
      )
      const ids: string[] = []
      for (const r of runs) {
        const id = await live.create(r.name, 'BTCUSDT', r.fields)
        await live.deploy(id, await live.registerKey(r.name, r.trader))
        ids.push(id)
      }
      const db = t.database.handle.db
      const run = (id: string) => db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', id).executeTakeFirstOrThrow()
      const workerOwner = await poll('the worker to claim both runs', 30_000, async () => {
        const owners = await Promise.all(ids.map(async (id) => (await run(id)).lease_owner))
        return owners.every((o) => o !== null && o === owners[0]) ? owners[0]! : undefined
      })
      for (const id of ids) {
        await poll('the worker to hold a position', 60_000, async () => {
          const s = await live.runState(id)
          return s && nothingPending(s) && s.broker.ledger.arrays.qty.some((q) => q !== 0) ? true : undefined
        })
      }

      // Each run's next order reaches the exchange 10 s after it was sent and executes then; the worker dies
      // while both wait (the one-symbol run trades less often: its order first, then the two-symbol run's).
      const faults = t.replay!.faults
      for (const id of ids) {
        faults.add({ path: new RegExp(`newClientOrderId=pp-${hex(id)}-`), executeLate: true, latencyMs: 10_000, times: 1 })
        await poll(`an order of ${id} in flight`, 120_000, () => (faults.active().length === 0 ? true : undefined))
      }
      worker.child.kill('SIGKILL')
      await new Promise((resolve) => worker.child.once('exit', resolve))
      const killedAt = Date.now()
      const atKill = await Promise.all(ids.map(async (id) => (await live.runState(id))!))
      const inFlight = atKill.map((s) => s.pendingOrder ?? Object.values(s.pendingOrders ?? {})[0])
      for (const [k, id] of ids.entries()) {
        assert.ok(inFlight[k], `${runs[k]!.name}: the intent was committed before its order was sent`)
        assert.equal((await live.orders(id)).find((o) => o.client_order_id === inFlight[k])?.status, 'new')
      }

      pool = new RunnerPool({ db, market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), secrets: t.services.secrets })
      pool.start()
      const owner = pool.owner
      assert.notEqual(owner, workerOwner)
      const tookOver: number[] = []
      for (const [k, id] of ids.entries()) {
        const r = runs[k]!
        await poll(`this process to take ${r.name} over`, 30_000, async () => ((await run(id)).lease_owner === owner ? true : undefined))
        // Before it trades, the new owner reconciles every symbol: the in-flight order is looked up and booked, not sent again.
        const booked = await poll(`${r.name}'s in-flight order booked by the successor`, 30_000, async () => (await live.orders(id)).find((o) => o.client_order_id === inFlight[k] && o.status === 'filled'))
        tookOver.push(Date.now() - killedAt)
        await poll(`two more fills of ${r.name} under the new owner`, 90_000, async () => {
          const s = await live.runState(id)
          return (await live.filled(id)).filter((o) => o.intent > booked.intent).length >= 2 && s && nothingPending(s) ? true : undefined
        })
        const resumed = (await live.runState(id))!
        assert.equal(resumed.warmupFrom, atKill[k]!.warmupFrom, `${r.name}: the same run, not a new warm-up`)
        assert.equal((await run(id)).run, 1)
        const picture = await live.quietPicture(r.trader, id, r.symbols)
        assert.equal(new Set(picture.sent).size, picture.sent.length, `${r.name}: no client order id twice`)
        assert.deepEqual(picture.sent, picture.booked, `${r.name}: exactly one exchange order per filled intent`)
        assert.equal(picture.sent.filter((c) => c === inFlight[k]).length, 1, `${r.name}: the in-flight order went out once`)
        assert.deepEqual(picture.exchangeQtys, picture.ledgerQtys, `${r.name}: the exchange holds what the ledger holds`)
      }
      for (const [k, id] of ids.entries()) {
        const paused = await live.call('POST', `/v1/strategies/${id}/pause`, { close_positions: true })
        assert.equal(paused.statusCode, 200, paused.body)
        for (const symbol of runs[k]!.symbols) assert.equal(await live.exchangeQty(runs[k]!.trader, symbol), 0, `${runs[k]!.name}: flat on ${symbol}`)
      }
      assert.ok(tookOver.every((ms) => ms < 30_000), `resumed ${tookOver} ms after the kill`)
      process.stdout.write(`# live takeover: in-flight orders booked ${tookOver.join(' and ')} ms after the kill (one symbol, two symbols)\n`)
    } finally {
      await pool?.stop()
      await t.close()
    }
  })
})
