import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { poll } from '../support/poll.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { assertBacktestParity, runState } from './backtest-parity.js'
import { exitRulesOf } from '../../src/strategies/exits.js'

const MINUTE = 60_000
// 1m bars close five times a wall second from 2025-06-17 06:00 UTC (inside the recorded minutes).
const SPEED = 300
const REPLAY_START = Date.UTC(2025, 5, 17, 6, 0, 0)

for (const backend of backends()) {
  describe(`dry run against its backtest (${backend})`, () => {
    let t: TestApp
    let pool: RunnerPool
    before(async () => {
      t = await startTestApp(backend, {}, { replay: { speed: SPEED, replayStart: REPLAY_START } })
      pool = new RunnerPool({ db: t.database.handle.db, market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals })
      pool.start()
    })
    after(async () => {
      await pool.stop()
      await t.close()
    })

    it('makes exactly the trades, fees, funding and PnL of a backtest over the same bars from the same warm-up boundary', async () => {
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const params = { fast: 3, slow: 8, allow_short: true }
      const created = await t.signed(key, 'POST', '/v1/strategies', { name: 'fast', template_id: 'sma_cross', params, symbols: ['BTCUSDT'], timeframe: '1m', capital: '1000', leverage: 2 })
      const id = created.json().id as string
      const deployed = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
      assert.equal(deployed.statusCode, 200, deployed.body)
      const db = t.database.handle.db
      const state = () => runState(t, id)
      // Drop the kline stream twice mid-run: the runner must backfill the bars it missed (the reconnect waits
      // 250 ms, about a bar at this speed) and act on each exactly once, or the trades below would differ.
      const dropped: number[] = []
      for (const bars of [20, 40]) {
        await poll(`the run to act on ${bars} bars`, 60_000, async () => {
          const s = await state()
          return s && s.broker.lastOpenTime !== null && s.broker.lastOpenTime >= s.firstActive + bars * MINUTE ? true : undefined
        })
        const before = (await state())!.broker.lastOpenTime!
        assert.ok(t.replay!.faults.disconnectStreams() >= 1, 'a kline stream was open')
        dropped.push(before)
      }
      await poll('the run to act on 80 closed bars with at least 4 closed trades', 60_000, async () => {
        const s = await state()
        const trades = await db.selectFrom('strategy_trades').select('id').where('strategy_id', '=', id).execute()
        return s && s.broker.lastOpenTime !== null && s.broker.lastOpenTime >= s.firstActive + 80 * MINUTE && trades.length >= 4 ? s : undefined
      })
      const paused = await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})
      assert.equal(paused.statusCode, 200, paused.body)
      const final = (await state())!
      const last = final.broker.lastOpenTime!

      await assertBacktestParity(t, id, { params, capital: 1000, leverage: 2 })
      const expectedTrades = await db.selectFrom('strategy_trades').select('id').where('strategy_id', '=', id).execute()
      assert.ok(expectedTrades.length >= 4)
      assert.ok(last > dropped[1]! + 5 * MINUTE, 'the run went on after the drops')
      const filled = await db.selectFrom('strategy_orders').selectAll().where('strategy_id', '=', id).where('status', '=', 'filled').execute()
      assert.ok(filled.length >= expectedTrades.length, 'every trade came from filled intents')
      assert.ok(filled.every((o) => /^pp-[0-9a-f]+-1-\d+$/.test(o.client_order_id)))
      // One clock per order (issue 35): stated at a bar's close on the exchange's clock (the replay's 2025, not
      // our server's), and a dry run fills it at the next bar's open, the same instant; the pause's close has no bar.
      const listed = (await t.signed(key, 'GET', `/v1/strategies/${id}/orders?limit=100`)).json().data as { client_order_id: string; reduce_only: boolean; status: string; created_at: string; filled_at: string | null; stated_at: string | null }[]
      const stated = listed.filter((o) => !o.reduce_only)
      assert.ok(stated.length >= filled.length - 1, `${stated.length} stated orders`)
      for (const o of stated) {
        assert.ok(o.stated_at !== null && Date.parse(o.stated_at) % MINUTE === 0 && Date.parse(o.stated_at) < Date.UTC(2026, 0, 1), `${o.client_order_id} stated at ${o.stated_at} (created ${o.created_at})`)
        if (o.status === 'filled') assert.equal(o.stated_at, o.filled_at, `${o.client_order_id}: stated at a close, filled at the next open`)
      }
      const s = (await t.signed(key, 'GET', `/v1/strategies/${id}`)).json()
      assert.equal(s.stats.total_trades, expectedTrades.length)
    })
  })
}

// 5m bars close three times a wall second: exits are examined on the minutes inside each.
const EXITS_SPEED = 900
const FIVE = 5 * MINUTE
const PROTECTIVE = ['stop_loss', 'take_profit', 'trailing_stop']

for (const backend of backends()) {
  describe(`dry run with protective exits against its backtest (${backend})`, () => {
    let t: TestApp
    let pool: RunnerPool
    const startPool = () => {
      pool = new RunnerPool({ db: t.database.handle.db, market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals })
      pool.start()
    }
    before(async () => {
      t = await startTestApp(backend, {}, { replay: { speed: EXITS_SPEED, replayStart: REPLAY_START } })
      startPool()
    })
    after(async () => {
      await pool.stop()
      await t.close()
    })

    it('exits the backtest exits, trade for trade (reasons and prices), through a restart mid-position that keeps levels, best price and latch', async () => {
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const params = { fast: 3, slow: 8, allow_short: true }
      const exits = { stop_loss: '0.004', take_profit: '0.006', trailing_stop: '0.002', trailing_activation: '0.001' }
      const created = await t.signed(key, 'POST', '/v1/strategies', { name: 'guarded', template_id: 'sma_cross', params, symbols: ['BTCUSDT'], timeframe: '5m', capital: '1000', leverage: 2, exits })
      assert.equal(created.statusCode, 200, created.body)
      const id = created.json().id as string
      assert.equal((await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })).statusCode, 200)
      const db = t.database.handle.db
      const state = () => runState(t, id)
      const arrays = (s: NonNullable<Awaited<ReturnType<typeof state>>>) => s.broker.ledger.arrays
      const trailing = (s: NonNullable<Awaited<ReturnType<typeof state>>>) => arrays(s).qty[0] !== 0 && typeof arrays(s).exitBest?.[0] === 'number'

      // Stop every runner while the run trails a position (its state quiet), read what protects it, start afresh:
      // the new runner restores the ledger, levels, best price and latch from the snapshot and backfills the gap.
      let restarted: NonNullable<Awaited<ReturnType<typeof state>>> | undefined
      for (let attempt = 0; attempt < 5 && !restarted; attempt++) {
        await poll('a trailed position', 60_000, async () => {
          const s = await state()
          return s && s.broker.lastOpenTime !== null && s.broker.lastOpenTime >= s.firstActive + 10 * FIVE && trailing(s) ? true : undefined
        })
        await pool.stop()
        const stopped = (await state())!
        if (trailing(stopped)) {
          restarted = stopped
          const positions = await t.signed(key, 'GET', `/v1/strategies/${id}/positions`)
          assert.equal(positions.statusCode, 200, positions.body)
          const [p] = positions.json()
          const a = arrays(stopped)
          const long = a.qty[0]! > 0
          const best = a.exitBest![0]!
          const level = (x: number) => Number(x.toFixed(1)) // BTCUSDT's tick is 0.1
          assert.equal(p.side, long ? 'buy' : 'sell')
          assert.equal(p.trigger, 'last')
          assert.equal(Number(p.stop_price), a.exitStop![0])
          assert.equal(Number(p.take_profit_price), a.exitTake![0])
          assert.equal(Number(p.trailing.best_price), best)
          assert.equal(Number(p.trailing.activation_price), a.exitActivation![0], 'where trailing started')
          assert.ok(long ? best >= a.exitActivation![0]! : best <= a.exitActivation![0]!)
          const trail = long ? Math.floor(best * (1 - 0.002) * 10) / 10 : Math.ceil(best * (1 + 0.002) * 10) / 10
          assert.ok(Math.abs(Number(p.trailing.stop_price) - level(trail)) < 1e-9, `${p.trailing.stop_price} vs ${trail}`)
          assert.ok(long ? Number(p.stop_price) < Number(p.entry_price) : Number(p.stop_price) > Number(p.entry_price))
        }
        startPool()
      }
      assert.ok(restarted, 'a restart while a position was trailed')

      await poll('80 bars acted on, with stop, target and trailing exits among the trades', 120_000, async () => {
        const s = await state()
        const trades = await db.selectFrom('strategy_trades').select('exit_reason').where('strategy_id', '=', id).execute()
        const reasons = new Set(trades.map((r) => r.exit_reason))
        const done = s && s.broker.lastOpenTime !== null && s.broker.lastOpenTime >= restarted!.broker.lastOpenTime! + 20 * FIVE && s.broker.lastOpenTime >= s.firstActive + 80 * FIVE
        return done && PROTECTIVE.every((r) => reasons.has(r)) && reasons.has('signal') ? true : undefined
      })
      assert.equal((await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})).statusCode, 200)
      await assertBacktestParity(t, id, { params, capital: 1000, leverage: 2, replay: { timeframe: '5m', exits: exitRulesOf(exits) } })

      // Each protective exit is its own reduce-only order, filled at the trade's exit with its reason, and its
      // position_closed event (the webhook's strategy.position_closed) says why.
      const trades = await db.selectFrom('strategy_trades').selectAll().where('strategy_id', '=', id).orderBy('id').execute()
      const exitOrders = await db.selectFrom('strategy_orders').selectAll().where('strategy_id', '=', id).where('exit_reason', 'is not', null).orderBy('intent').execute()
      const protective = trades.filter((r) => PROTECTIVE.includes(r.exit_reason))
      assert.deepEqual(
        exitOrders.map((o) => [o.exit_reason, o.reduce_only, o.target, o.status, o.qty, o.price, o.filled_at?.getTime()]),
        protective.map((r) => [r.exit_reason, true, '0', 'filled', r.qty, r.exit_price, r.exit_time.getTime()]),
      )
      const closed = (await db.selectFrom('events').select('data').where('type', '=', 'strategy.position_closed').orderBy('seq').execute())
        .map((e) => e.data as { strategy_id: string; exit_reason: string; exit_price: string })
        .filter((d) => d.strategy_id === id)
      assert.deepEqual(closed.map((d) => [d.exit_reason, d.exit_price]), trades.map((r) => [r.exit_reason, r.exit_price]))
      const listed = (await t.signed(key, 'GET', `/v1/strategies/${id}/orders?limit=100`)).json().data as { exit_reason: string | null }[]
      assert.ok(listed.some((o) => o.exit_reason !== null) && listed.some((o) => o.exit_reason === null))
    })

    it('trigger mark: exits examined on the mark-price minutes (GET /fapi/v1/markPriceKlines) equal the backtest on the same mark bars', async () => {
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const params = { fast: 3, slow: 8, allow_short: true }
      const exits = { stop_loss: '0.003', take_profit: '0.004', trigger: 'mark' as const }
      const created = await t.signed(key, 'POST', '/v1/strategies', { name: 'marked', template_id: 'sma_cross', params, symbols: ['BTCUSDT'], timeframe: '5m', capital: '1000', leverage: 2, exits })
      const id = created.json().id as string
      assert.equal((await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })).statusCode, 200)
      await poll('30 bars acted on with protective exits among the trades', 120_000, async () => {
        const s = await runState(t, id)
        const trades = await t.database.handle.db.selectFrom('strategy_trades').select('exit_reason').where('strategy_id', '=', id).execute()
        return s && s.broker.lastOpenTime !== null && s.broker.lastOpenTime >= s.firstActive + 30 * FIVE && trades.filter((r) => PROTECTIVE.includes(r.exit_reason)).length >= 2 ? true : undefined
      })
      assert.equal((await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})).statusCode, 200)
      await assertBacktestParity(t, id, { params, capital: 1000, leverage: 2, replay: { timeframe: '5m', exits: exitRulesOf(exits) } })
    })
  })
}
