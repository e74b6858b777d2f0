import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { ONE_MINUTE_RANGE_JOB, pollEnded } from '../support/backtest-job.js'
import type { KeyPair } from '../support/signing.js'

type Json = Record<string, any>

const job = ONE_MINUTE_RANGE_JOB
const SCOPES = ['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write'] as const
const RESOLUTIONS = new Set(['1m', '5m', '15m', '1h'])

function finished(t: TestApp, key: KeyPair, id: string): Promise<Json> {
  return pollEnded(t, key, `/v1/backtest/jobs/${id}`, 60_000)
}

async function run(t: TestApp, key: KeyPair, body: Json): Promise<Json> {
  const created = await t.signed(key, 'POST', '/v1/backtest/jobs', body)
  assert.equal(created.statusCode, 200, created.body)
  const done = await finished(t, key, created.json().id)
  assert.equal(done.status, 'done', JSON.stringify(done.error))
  return done
}

for (const backend of backends()) {
  describe(`backtest jobs with protective exits (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'workers' })
      key = await t.createKey([...SCOPES])
    })
    after(() => t.close())

    it('fills a tight stop inside the bar, counts exit reasons and resolutions, and shows the resolved exits', async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, exits: { stop_loss: '0.004', take_profit: '0.03' } })
      assert.equal(created.statusCode, 200, created.body)
      const expected = { stop_loss: '0.004', take_profit: '0.03', trigger: 'last' }
      assert.deepEqual(created.json().config.exits, expected)
      assert.equal('slippage_bps' in created.json().config, false, 'slippage_bps only when given')
      const row = await t.database.handle.db.selectFrom('backtest_jobs').select('config').where('id', '=', created.json().id).executeTakeFirstOrThrow()
      assert.deepEqual((row.config as Json).exits, expected)

      const done = await finished(t, key, created.json().id)
      assert.equal(done.status, 'done', JSON.stringify(done.error))
      const { trades, metrics, exit_resolution: resolution, ambiguous_exits: ambiguous } = done.result
      const reasons = trades.map((trade: Json) => trade.exit_reason)
      assert.ok(reasons.includes('stop_loss'), `no stop among ${reasons.join(',')}`)
      const counted = Object.fromEntries(['signal', 'stop_loss', 'take_profit', 'trailing_stop', 'liquidation', 'adl'].map((reason) => [reason, reasons.filter((r: string) => r === reason).length]))
      assert.deepEqual(metrics.exit_reasons, counted)
      assert.deepEqual(Object.keys(metrics.exit_reasons), ['signal', 'stop_loss', 'take_profit', 'trailing_stop', 'liquidation', 'adl'])
      assert.equal(metrics.total_trades, trades.length)
      // A stop exit fills at the stop or, on a gap, worse: never better than 0.4 % under the entry of a long.
      for (const trade of trades.filter((one: Json) => one.exit_reason === 'stop_loss')) {
        assert.equal(trade.side, 'buy')
        assert.ok(Number(trade.exit_price) <= Number(trade.entry_price) * (1 - 0.004) + 0.1, JSON.stringify(trade))
      }
      // Which bars resolve the exits depends on the detail history loaded: assert the shape only.
      assert.deepEqual(Object.keys(resolution), ['BTCUSDT'])
      for (const [label, count] of Object.entries(resolution.BTCUSDT)) {
        assert.ok(RESOLUTIONS.has(label), label)
        assert.ok(Number.isInteger(count) && (count as number) > 0)
      }
      assert.ok(Number.isInteger(ambiguous.total) && ambiguous.total >= 0)
      assert.equal(Object.values(ambiguous.by_symbol as Record<string, number>).reduce((sum, n) => sum + n, 0), ambiguous.total)

      // The list's metrics follow the same rule, read from the stored metrics column.
      const listed = (await t.signed(key, 'GET', '/v1/backtest/jobs?limit=1')).json().data[0]
      assert.deepEqual(listed.result, { metrics })
    })

    it('answers a job without exits exactly as before: no exit fields, every trade closed by its signal', async () => {
      const done = await run(t, key, job)
      assert.deepEqual(Object.keys(done.config), ['template_id', 'params', 'symbols', 'timeframe', 'start', 'end', 'capital', 'leverage', 'fee_model', 'fee_bps'])
      assert.deepEqual(Object.keys(done.result), ['metrics', 'equity_curve', 'trades', 'open_positions', 'gaps', 'final_equity', 'fees_paid', 'funding_paid', 'margin_table', 'warnings'])
      assert.equal('exit_reasons' in done.result.metrics, false)
      assert.ok(done.result.trades.every((trade: Json) => trade.exit_reason === 'signal'))
    })

    it('worsens every fill by slippage_bps', async () => {
      const plain = await run(t, key, { ...job, slippage_bps: '0' })
      const slipped = await run(t, key, { ...job, slippage_bps: '10' })
      assert.deepEqual([plain.config.slippage_bps, slipped.config.slippage_bps], ['0', '10'])
      const [a, b] = [plain.result.trades, slipped.result.trades] as Json[][]
      assert.ok(a!.length > 0)
      assert.deepEqual(b!.map((trade) => trade.entry_time), a!.map((trade) => trade.entry_time), 'the same signals')
      a!.forEach((trade, i) => {
        const worse = b![i]!
        // Longs only (allow_short false): bought 10 bp higher, sold 10 bp lower, within a tick (0.1).
        assert.ok(Math.abs(Number(worse.entry_price) - Number(trade.entry_price) * 1.001) <= 0.1, `${worse.entry_price} vs ${trade.entry_price}`)
        assert.ok(Math.abs(Number(worse.exit_price) - Number(trade.exit_price) * 0.999) <= 0.1, `${worse.exit_price} vs ${trade.exit_price}`)
      })
      assert.ok(Number(slipped.result.final_equity) < Number(plain.result.final_equity))
      assert.equal('exit_reasons' in slipped.result.metrics, false, 'slippage alone is no protective exit')
    })

    // Every job a test queues here is awaited: an app closed under a running job may leave a thread behind.
    it("takes a strategy's stored exits as the base for a job that runs with them", async () => {
      const strategy = { name: 's', template_id: 'sma_cross', params: { fast: 10, slow: 30 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '10000' }
      const id = (await t.signed(key, 'POST', '/v1/strategies', strategy)).json().id
      await t.database.handle.db.updateTable('strategies').set({ exits: JSON.stringify({ stop_loss: '0.004', trailing_stop: '0.01' }) }).where('id', '=', id).execute()
      const span = { start: job.start, end: job.end }
      const based = await t.signed(key, 'POST', '/v1/backtest/jobs', { strategy_id: id, ...span })
      assert.equal(based.statusCode, 200, based.body)
      assert.deepEqual(based.json().config.exits, { stop_loss: '0.004', trailing_stop: '0.01', trigger: 'last' })
      const done = await finished(t, key, based.json().id)
      assert.equal(done.status, 'done', JSON.stringify(done.error))
      assert.ok(done.result.trades.some((trade: Json) => trade.exit_reason === 'stop_loss' || trade.exit_reason === 'trailing_stop'))
      // Another user cannot base a job on it, exits or not.
      const other = await t.createKey([...SCOPES])
      assert.equal((await t.signed(other, 'POST', '/v1/backtest/jobs', { strategy_id: id, ...span, exits: { stop_loss: '0.01' } })).statusCode, 404)
    })
  })

  describe(`backtest job exits refused (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'queue' })
    })
    after(() => t.close())

    it('refuses every bound with 400 INVALID_PARAMETER naming the field, and queues nothing', async () => {
      const key = await t.createKey([...SCOPES])
      const queued = async () => Number((await t.database.handle.pool.query("select count(*) from pgboss.job where name like 'backtest%'")).rows[0].count)
      const before = await queued()
      const cases: [Json, string][] = [
        [{ stop_loss: '0' }, 'exits.stop_loss'],
        [{ stop_loss: '1' }, 'exits.stop_loss'],
        [{ stop_loss: '-1' }, 'exits.stop_loss'],
        [{ stop_loss: 'abc' }, 'exits.stop_loss'],
        [{ stop_loss: 0.02 }, 'exits.stop_loss'],
        [{ take_profit: '100.5' }, 'exits.take_profit'],
        [{ trailing_stop: '0.0005' }, 'exits.trailing_stop'],
        [{ trailing_stop: '0.21' }, 'exits.trailing_stop'],
        [{ trailing_activation: '0.01' }, 'exits.trailing_activation'],
        [{ trigger: 'mark' }, 'exits'],
        [{}, 'exits'],
        [{ stop_loss: '0.02', stop: '0.01' }, 'exits.stop'],
        [{ stop_loss: '0.02', trigger: 'index' }, 'exits.trigger'],
      ]
      for (const [exits, field] of cases) {
        const res = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, exits })
        assert.equal(res.statusCode, 400, `${JSON.stringify(exits)}: ${res.body}`)
        assert.deepEqual([res.json().error.code, res.json().error.field], ['INVALID_PARAMETER', field], res.body)
      }
      for (const [slippage, field] of [['1001', 'slippage_bps'], ['-1', 'slippage_bps'], ['1e2', 'slippage_bps'], [5, 'slippage_bps']] as const) {
        const res = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, slippage_bps: slippage })
        assert.equal(res.statusCode, 400, `${slippage}: ${res.body}`)
        assert.deepEqual([res.json().error.code, res.json().error.field], ['INVALID_PARAMETER', field], res.body)
      }
      const bad = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, exits: { trailing_stop: '0.21' } })
      assert.match(bad.json().error.message, /exits\.trailing_stop must be a decimal string from 0\.001 to 0\.2/)
      assert.deepEqual((await t.signed(key, 'GET', '/v1/backtest/jobs')).json().data, [])
      assert.equal(await queued(), before)
      const rows = await t.database.handle.db.selectFrom('backtest_jobs').select('id').execute()
      assert.deepEqual(rows, [])
    })

    it('refuses exits without a signature, or with a key lacking backtests:write', async () => {
      const reader = await t.createKey(['backtests:read'])
      const body = { ...job, exits: { stop_loss: '0.02' } }
      assert.equal((await t.signed(reader, 'POST', '/v1/backtest/jobs', body)).statusCode, 403)
      const unsigned = await t.app.inject({ method: 'POST', url: '/v1/backtest/jobs', payload: body })
      assert.equal(unsigned.statusCode, 401)
      assert.deepEqual(await t.database.handle.db.selectFrom('backtest_jobs').select('id').execute(), [])
    })

    it("replaces a strategy's stored exits whole by the request's", async () => {
      const key = await t.createKey([...SCOPES])
      const strategy = { name: 's', template_id: 'sma_cross', params: {}, symbols: ['BTCUSDT'], timeframe: '1h', capital: '10000' }
      const id = (await t.signed(key, 'POST', '/v1/strategies', strategy)).json().id
      await t.database.handle.db.updateTable('strategies').set({ exits: JSON.stringify({ stop_loss: '0.004', trailing_stop: '0.01' }) }).where('id', '=', id).execute()
      const over = await t.signed(key, 'POST', '/v1/backtest/jobs', { strategy_id: id, start: job.start, end: job.end, exits: { take_profit: '0.05', trigger: 'mark' } })
      assert.equal(over.statusCode, 200, over.body)
      assert.deepEqual(over.json().config.exits, { take_profit: '0.05', trigger: 'mark' })
      const row = await t.database.handle.db.selectFrom('backtest_jobs').select('config').where('id', '=', over.json().id).executeTakeFirstOrThrow()
      assert.deepEqual((row.config as Json).exits, { take_profit: '0.05', trigger: 'mark' })
    })

    it("refuses a strategy's stored exits that no longer pass, naming exits", async () => {
      const key = await t.createKey([...SCOPES])
      const strategy = { name: 's', template_id: 'sma_cross', params: {}, symbols: ['BTCUSDT'], timeframe: '1h', capital: '10000' }
      const id = (await t.signed(key, 'POST', '/v1/strategies', strategy)).json().id
      await t.database.handle.db.updateTable('strategies').set({ exits: JSON.stringify({ trailing_stop: '0.5' }) }).where('id', '=', id).execute()
      const res = await t.signed(key, 'POST', '/v1/backtest/jobs', { strategy_id: id, start: job.start, end: job.end })
      assert.equal(res.statusCode, 400, res.body)
      assert.equal(res.json().error.field, 'exits.trailing_stop')
      // The request's exits replace the stored ones whole: the bad stored value no longer counts.
      assert.equal((await t.signed(key, 'POST', '/v1/backtest/jobs', { strategy_id: id, start: job.start, end: job.end, exits: { stop_loss: '0.02' } })).statusCode, 200)
    })
  })
}
