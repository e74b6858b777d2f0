import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { BINANCE_BTCUSDT_BRACKETS, runBacktest } from '../../src/engine/index.js'
import { PAPER_FEES } from '../../src/live/deploy.js'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { symbolRules } from '../../src/backtests/upstream-history.js'
import { poll } from '../support/poll.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { loadFunding, loadKlines } from '../engine/helpers.js'

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
      const state = async () => (await db.selectFrom('strategy_runs').select('state').where('strategy_id', '=', id).executeTakeFirst())?.state as
        | { warmupFrom: number; firstActive: number; broker: { lastOpenTime: number | null; ledger: { cash: number; feesPaid: number; fundingPaid: number; arrays: { qty: number[] } } } }
        | null
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
      const done = await poll('the run to act on 80 closed bars with at least 4 closed trades', 60_000, async () => {
        const s = await state()
        const trades = await db.selectFrom('strategy_trades').select('id').where('strategy_id', '=', id).execute()
        return s && s.broker.lastOpenTime !== null && s.broker.lastOpenTime >= s.firstActive + 80 * MINUTE && trades.length >= 4 ? s : undefined
      })
      const paused = await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})
      assert.equal(paused.statusCode, 200, paused.body)
      const final = (await state())!
      const last = final.broker.lastOpenTime!

      const bars = loadKlines('BTCUSDT', 'BTCUSDT-1m-20250504-20250624.csv.gz', MINUTE)
      const rules = await symbolRules(t.services.market, 'BTCUSDT')
      const expected = runBacktest({
        templateId: 'sma_cross',
        params,
        bars: [bars],
        funding: [loadFunding('BTCUSDT-fundingRate-20190910-20260517.csv')],
        rules: [{ ...rules, brackets: BINANCE_BTCUSDT_BRACKETS }],
        capital: 1000,
        leverage: 2,
        fees: PAPER_FEES,
        start: final.warmupFrom,
        end: last,
      })
      const stored = await db.selectFrom('strategy_trades').selectAll().where('strategy_id', '=', id).orderBy('id').execute()
      assert.ok(expected.trades.length >= 4)
      assert.deepEqual(
        stored.map((r) => ({
          entryTime: r.entry_time.getTime(),
          exitTime: r.exit_time.getTime(),
          side: r.side,
          entryPrice: Number(r.entry_price),
          exitPrice: Number(r.exit_price),
          qty: Number(r.qty),
          fee: Number(r.fee),
          funding: Number(r.funding),
          pnl: Number(r.pnl),
        })),
        expected.trades.map((tr) => ({ entryTime: tr.entryTime, exitTime: tr.exitTime, side: tr.side, entryPrice: tr.entryPrice, exitPrice: tr.exitPrice, qty: tr.qty, fee: tr.fee, funding: tr.funding, pnl: tr.pnl })),
      )
      assert.equal(final.broker.ledger.feesPaid, expected.feesPaid)
      assert.equal(final.broker.ledger.fundingPaid, expected.fundingPaid)
      assert.equal(final.broker.ledger.arrays.qty[0], (expected.openPositions[0]?.qty ?? 0) * (expected.openPositions[0]?.side === 'sell' ? -1 : 1))
      assert.ok(last > dropped[1]! + 5 * MINUTE, 'the run went on after the drops')
      const filled = await db.selectFrom('strategy_orders').selectAll().where('strategy_id', '=', id).where('status', '=', 'filled').execute()
      assert.ok(filled.length >= expected.trades.length, 'every trade came from filled intents')
      assert.ok(filled.every((o) => /^pp-[0-9a-f]+-1-\d+$/.test(o.client_order_id)))
      const s = (await t.signed(key, 'GET', `/v1/strategies/${id}`)).json()
      assert.equal(s.stats.total_trades, expected.trades.length)
    })
  })
}
