import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { findCustomVersion } from '../../src/custom-templates/queries.js'
import { customTemplate } from '../../src/custom-templates/sandbox/custom-template.js'
import { StrategyInstance } from '../../src/custom-templates/sandbox/strategy-instance.js'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'
import { assertBacktestParity, runState } from './backtest-parity.js'

const MINUTE = 60_000
// 1m bars close five times a wall second from 2025-06-17 06:00 UTC (inside the recorded minutes of BTCUSDT and ETHUSDT).
const REPLAY = { speed: 300, replayStart: Date.UTC(2025, 5, 17, 6, 0, 0) }
const ROTATION = readFileSync(new URL('../../examples/strategies/momentum-rotation.js', import.meta.url), 'utf8')

async function deploy(t: TestApp, key: KeyPair, body: Record<string, unknown>): Promise<string> {
  const created = await t.signed(key, 'POST', '/v1/strategies', { timeframe: '1m', leverage: 2, ...body })
  assert.equal(created.statusCode, 200, created.body)
  const id = created.json().id as string
  const deployed = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
  assert.equal(deployed.statusCode, 200, deployed.body)
  return id
}

/** Polls until the strategy's run acted on `steps` steps past its warm-up and closed `trades` trades. */
async function acted(t: TestApp, id: string, steps: number, trades: number): Promise<void> {
  await poll(`${id} to act on ${steps} steps with ${trades} closed trades`, 90_000, async () => {
    const s = await runState(t, id)
    const closed = await t.database.handle.db.selectFrom('strategy_trades').select('id').where('strategy_id', '=', id).execute()
    return s && s.broker.lastOpenTime !== null && s.broker.lastOpenTime >= s.firstActive + steps * MINUTE && closed.length >= trades ? true : undefined
  })
}

for (const backend of backends()) {
  describe(`runs that do more (${backend})`, () => {
    let t: TestApp
    let pool: RunnerPool
    before(async () => {
      t = await startTestApp(backend, {}, { replay: REPLAY })
      pool = new RunnerPool({ db: t.database.handle.db, market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals })
      pool.start()
    })
    after(async () => {
      await pool.stop()
      await t.close()
    })

    it('two dry runs of different strategies on BTCUSDT and a two-symbol momentum run, side by side: each equals its own backtest', async () => {
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const sma = { fast: 3, slow: 8, allow_short: true }
      const ema = { fast: 4, slow: 9, allow_short: true }
      const momentum = { lookback: 5, rebalance_every: 3, long_count: 1, short_count: 1 }
      const a = await deploy(t, key, { name: 'a', template_id: 'sma_cross', params: sma, symbols: ['BTCUSDT'], capital: '1000' })
      const b = await deploy(t, key, { name: 'b', template_id: 'ema_cross', params: ema, symbols: ['BTCUSDT'], capital: '1500' })
      const m = await deploy(t, key, { name: 'm', template_id: 'cross_sectional_momentum', params: momentum, symbols: ['BTCUSDT', 'ETHUSDT'], capital: '3000' })
      // A dropped stream mid-run: every run backfills the steps it missed and acts on each exactly once.
      await acted(t, m, 20, 0)
      assert.ok(t.replay!.faults.disconnectStreams() >= 2, 'both symbols’ kline streams were open')
      await Promise.all([acted(t, a, 60, 3), acted(t, b, 60, 3), acted(t, m, 60, 6)])
      for (const id of [a, b, m]) {
        const paused = await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})
        assert.equal(paused.statusCode, 200, paused.body)
      }
      await assertBacktestParity(t, a, { params: sma, capital: 1000, leverage: 2 })
      await assertBacktestParity(t, b, { templateId: 'ema_cross', params: ema, capital: 1500, leverage: 2 })
      const final = await assertBacktestParity(t, m, { templateId: 'cross_sectional_momentum', params: momentum, capital: 3000, leverage: 2, symbols: ['BTCUSDT', 'ETHUSDT'] })

      const db = t.database.handle.db
      // Nothing of one run leaks into another: each has its own orders, trades and ledger.
      const orders = await db.selectFrom('strategy_orders').select(['strategy_id', 'symbol', 'client_order_id', 'status']).where('strategy_id', 'in', [a, b, m]).execute()
      for (const id of [a, b]) assert.ok(orders.filter((o) => o.strategy_id === id).every((o) => o.symbol === 'BTCUSDT' && o.client_order_id.startsWith(`pp-${id.slice(6)}-1-`)))
      const mine = orders.filter((o) => o.strategy_id === m && o.status === 'filled')
      assert.deepEqual([...new Set(mine.map((o) => o.symbol))].sort(), ['BTCUSDT', 'ETHUSDT'], 'the momentum run traded both symbols')
      assert.equal(new Set(mine.map((o) => o.client_order_id)).size, mine.length)
      const trades = await db.selectFrom('strategy_trades').select(['strategy_id', 'symbol']).where('strategy_id', '=', m).execute()
      const record = (await t.signed(key, 'GET', `/v1/strategies/${m}`)).json()
      assert.equal(record.stats.total_trades, trades.length)
      assert.equal(record.stats.open_positions, final.broker.ledger.arrays.qty.filter((q) => q !== 0).length)
      const positions = (await t.signed(key, 'GET', `/v1/strategies/${m}/positions`)).json() as { symbol: string; side: string }[]
      const held = ['BTCUSDT', 'ETHUSDT'].filter((_, s) => final.broker.ledger.arrays.qty[s] !== 0)
      assert.deepEqual(positions.map((p) => p.symbol).sort(), held, 'the positions endpoint lists every symbol the run holds')
    })

    it('a paused many-symbol dry run resumes as a new run carrying its positions and cash on every symbol', async () => {
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const momentum = { lookback: 3, rebalance_every: 2, long_count: 1, short_count: 1 }
      const id = await deploy(t, key, { name: 'resume', template_id: 'cross_sectional_momentum', params: momentum, symbols: ['ETHUSDT', 'BTCUSDT'], capital: '2000' })
      await poll('positions on both symbols', 60_000, async () => ((await runState(t, id))?.broker.ledger.arrays.qty.every((q) => q !== 0) ? true : undefined))
      assert.equal((await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})).statusCode, 200)
      const first = (await runState(t, id))!
      const resumed = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true, capital: '2500' })
      assert.equal(resumed.statusCode, 200, resumed.body)
      const db = t.database.handle.db
      const runs = await db.selectFrom('strategy_runs').select(['run', 'state']).where('strategy_id', '=', id).orderBy('run').execute()
      assert.equal(runs.length, 2)
      const carried = runs[1]!.state as unknown as { broker: { ledger: { cash: number; arrays: { qty: number[] } } } }
      assert.deepEqual(carried.broker.ledger.arrays.qty, first.broker.ledger.arrays.qty, 'the same position on each symbol')
      assert.equal(carried.broker.ledger.cash, first.broker.ledger.cash + 500, 'the cash moved by the change of capital')
      await acted(t, id, 5, 0)
      assert.equal((await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, { close_positions: true })).statusCode, 200)
      assert.ok((await runState(t, id))!.broker.ledger.arrays.qty.every((q) => q === 0), 'flat on every symbol')
      const run2 = await db.selectFrom('strategy_orders').select(['client_order_id', 'status', 'reduce_only']).where('strategy_id', '=', id).where('run', '=', 2).execute()
      assert.ok(run2.every((o) => o.client_order_id.startsWith(`pp-${id.slice(6)}-2-`) && o.status !== 'new'))
      assert.ok(run2.filter((o) => o.reduce_only && o.status === 'filled').length >= 1, 'the pause closed with reduce-only intents')
      assert.equal((await t.signed(key, 'GET', `/v1/strategies/${id}`)).json().stats.open_positions, 0)
    })

    it('a symbol whose kline stream goes silent holds a step up only for the bounded wait: REST brings its bars, and the run still equals its backtest', async () => {
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const momentum = { lookback: 4, rebalance_every: 2, long_count: 1, short_count: 0 }
      const id = await deploy(t, key, { name: 'silent', template_id: 'cross_sectional_momentum', params: momentum, symbols: ['BTCUSDT', 'ETHUSDT'], capital: '2000' })
      await acted(t, id, 10, 0)
      // ETHUSDT's closed klines stop coming while its socket stays open: without the wait, the run would stall here.
      const remove = t.replay!.faults.add({ marketEvents: 'drop', path: 'ethusdt@kline_1m' })
      try {
        const silentFrom = (await runState(t, id))!.broker.lastOpenTime!
        await poll('the run to act on 20 more steps while ETHUSDT is silent', 60_000, async () => {
          const s = await runState(t, id)
          return s && s.broker.lastOpenTime! >= silentFrom + 20 * MINUTE ? true : undefined
        })
        assert.equal(t.replay!.faults.active().length, 1, 'ETHUSDT stayed silent throughout')
      } finally {
        remove()
      }
      await acted(t, id, 60, 4)
      const paused = await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})
      assert.equal(paused.statusCode, 200, paused.body)
      await assertBacktestParity(t, id, { templateId: 'cross_sectional_momentum', params: momentum, capital: 2000, leverage: 2, symbols: ['BTCUSDT', 'ETHUSDT'] })
      const filled = await t.database.handle.db.selectFrom('strategy_orders').select('symbol').where('strategy_id', '=', id).where('status', '=', 'filled').execute()
      assert.ok(filled.some((o) => o.symbol === 'ETHUSDT'), 'ETHUSDT was traded')
    })

    it('a user’s many-symbol module runs in a dry run exactly as in its backtest; pause with close_positions closes every symbol', async () => {
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const uploaded = await t.signed(key, 'POST', '/v1/templates', { name: 'rotation', source: ROTATION })
      assert.equal(uploaded.statusCode, 201, uploaded.body)
      const templateId = uploaded.json().id as string
      const params = { lookback: 4, rebalance: 2, top: 1, min_return: -1 }
      const id = await deploy(t, key, { name: 'rotation', template_id: templateId, params, symbols: ['ETHUSDT', 'BTCUSDT'], capital: '2000' })
      await acted(t, id, 40, 4)
      await poll('a position to be open', 30_000, async () => ((await runState(t, id))!.broker.ledger.arrays.qty.some((q) => q !== 0) ? true : undefined))
      const pausedAt = new Date(t.clock.now())
      const paused = await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, { close_positions: true })
      assert.equal(paused.statusCode, 200, paused.body)

      const db = t.database.handle.db
      // The run's trades end at replay times (2025); the pause's closes at the app's clock, after pausedAt.
      const closedByPause = await db.selectFrom('strategy_trades').select('symbol').where('strategy_id', '=', id).where('exit_time', '>', pausedAt).execute()
      assert.equal(closedByPause.length, 1, 'rotation to the top 1 held one symbol at the pause, the other was flat')
      const closes = await db.selectFrom('strategy_orders').select(['symbol', 'status']).where('strategy_id', '=', id).where('reduce_only', '=', true).execute()
      assert.deepEqual(closes, [{ symbol: closedByPause[0]!.symbol, status: 'filled' }], 'one close intent, for the held symbol; none for the flat one')
      const run = await db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', id).executeTakeFirstOrThrow()
      const version = (await findCustomVersion(db, run.user_id, templateId, 1))!
      const instance = await StrategyInstance.load(version.compiled.code, run.seed!)
      try {
        const template = customTemplate({ id: templateId, version: 1, description: version.description, timeframe: '1m' }, instance)
        await assertBacktestParity(t, id, { params: run.params, capital: 2000, leverage: 2, template, symbols: ['ETHUSDT', 'BTCUSDT'], closedAtPause: true })
      } finally {
        instance.dispose()
      }
      const record = (await t.signed(key, 'GET', `/v1/strategies/${id}`)).json()
      assert.equal(record.stats.open_positions, 0)
      const open = await db.selectFrom('strategy_orders').select('client_order_id').where('strategy_id', '=', id).where('status', '=', 'new').execute()
      assert.deepEqual(open, [], 'no intent is left waiting')
    })
  })
}
