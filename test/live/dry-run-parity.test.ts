import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { poll } from '../support/poll.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { assertBacktestParity, runState } from './backtest-parity.js'

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
      const s = (await t.signed(key, 'GET', `/v1/strategies/${id}`)).json()
      assert.equal(s.stats.total_trades, expectedTrades.length)
    })
  })
}
