import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { metrics } from '../../src/ops/registry.js'
import { type SignedInUser, signIn } from '../auth/bearer.js'
import { account, hex, LIVE_PARAMS, liveHarness } from './live-accounts.js'
import { btcMinuteBacktest } from './btc-minute-backtest.js'
import { assertLiveTrades } from './live-parity.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { poll } from '../support/poll.js'

const MINUTE = 60_000
/** A process counter's value for one label set (this process's runners are the test's). */
const counted = async (counter: { get(): Promise<{ values: { labels: object; value: number }[] }> }, labels: Record<string, string>) =>
  (await counter.get()).values.find((v) => Object.entries(labels).every(([k, x]) => (v.labels as Record<string, unknown>)[k] === x))?.value ?? 0
// 1m bars close twice a wall second from 2025-06-17 06:00 UTC (inside the recorded minutes).
const SPEED = 120
const REPLAY_START = Date.UTC(2025, 5, 17, 6, 0, 0)
const PARAMS = LIVE_PARAMS
const ACCOUNTS = { parity: account('PARITY'), unknown: account('UNKNOWN'), forgot: account('FORGOT'), foreign: account('FOREIGN'), revoked: account('REVOKED'), dropped: account('DROPPED'), poor: account('POOR') }

for (const backend of backends()) {
  describe(`live runs on the exchange (${backend})`, () => {
    let t: TestApp
    let pool: RunnerPool
    let successor: RunnerPool | undefined
    let user: SignedInUser
    const keyIds: Record<string, string> = {}
    const strategies: Record<string, string> = {}

    const { db, call, exchange, orders, filled, exchangeOrders, exchangeQty, runState, create, deploy, registerKey, errorOf, quietPicture } = liveHarness(
      () => t,
      () => user,
    )

    before(async () => {
      t = await startTestApp(backend, {}, { replay: { speed: SPEED, replayStart: REPLAY_START, accounts: Object.values(ACCOUNTS).map((a) => ({ ...a, balances: { USDT: '10000' } })) } })
      user = await signIn(t)
      for (const [name, a] of Object.entries(ACCOUNTS)) keyIds[name] = await registerKey(name, a)
      pool = new RunnerPool({ db: db(), market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals, secrets: t.services.secrets })
      pool.start()
      for (const name of Object.keys(ACCOUNTS)) strategies[name] = await create(name)
      const faults = t.replay!.faults
      // The first two orders of one run execute, then answer 503 "Unknown error" and 408 -1007.
      faults.add({ path: new RegExp(`newClientOrderId=${strategies.unknown!.replace('strat_', 'pp-')}-`), executeThen: 503, times: 1 })
      faults.add({ path: new RegExp(`newClientOrderId=${strategies.unknown!.replace('strat_', 'pp-')}-`), executeThen: -1007, times: 1 })
      // Another run's first order executes, answers 503, and every lookup by id says "unknown order" for a while.
      faults.add({ path: new RegExp(`newClientOrderId=pp-${hex(strategies.forgot!)}-`), executeThen: 503, times: 1 })
      faults.add({ path: new RegExp(`origClientOrderId=pp-${hex(strategies.forgot!)}-`), forget: true, times: 12 })
      // Its order events are lost too, so only REST lookups can settle it (the user stream would at once).
      faults.add({ userEvents: 'drop', event: 'ORDER_TRADE_UPDATE', account: ACCOUNTS.forgot.apiKey })
      // Another run's first order never reaches the exchange (the connection drops after sending).
      faults.add({ path: new RegExp(`newClientOrderId=pp-${hex(strategies.dropped!)}-`), drop: true, times: 1 })
      // Counts its lookups by id (a 1 ms delay changes nothing else).
      faults.add({ path: new RegExp(`origClientOrderId=pp-${hex(strategies.dropped!)}-`), latencyMs: 1, times: 1000 })
      for (const name of Object.keys(ACCOUNTS)) await deploy(strategies[name]!, keyIds[name]!)
      // After its deploy passed the 402 check, one account is drained: every order will meet -2019.
      t.replay!.accounts.fund(ACCOUNTS.poor.apiKey, 'USDT', '-9999')
    })
    after(async () => {
      await pool.stop()
      await successor?.stop()
      await t.close()
    })

    it('402 when the account holds less than the capital; the strategy stays draft', async () => {
      const id = await create('too big', 'ETHUSDT')
      const res = await call('POST', `/v1/strategies/${id}/deploy`, { dry_run: false, exchange_key_id: keyIds.parity, capital: '9500' })
      assert.equal(res.statusCode, 402, res.body)
      assert.equal(res.json().error.code, 'INSUFFICIENT_FUNDS')
      assert.match(res.json().error.message, /exchange account/)
      assert.equal((await call('GET', `/v1/strategies/${id}`)).json().status, 'draft')
    })

    it('409 for a second live run on the account and symbol (one-way mode nets them); the same strategy deploys as a dry run beside it', async () => {
      const id = await create('second on BTCUSDT')
      const res = await call('POST', `/v1/strategies/${id}/deploy`, { dry_run: false, exchange_key_id: keyIds.parity })
      assert.equal(res.statusCode, 409, res.body)
      assert.equal(res.json().error.code, 'INVALID_STATE')
      assert.match(res.json().error.message, new RegExp(`strategy ${strategies.parity} already trades BTCUSDT on this account`))
      assert.equal((await call('GET', `/v1/strategies/${id}`)).json().status, 'draft')
      const dry = await call('POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
      assert.equal(dry.statusCode, 200, dry.body)
      assert.equal((await call('POST', `/v1/strategies/${id}/pause`, {})).statusCode, 200)
    })

    it('makes the trades of a backtest over the same bars, at prices within a few basis points', async () => {
      const id = strategies.parity!
      const done = await poll('the live run to act on 60 closed bars with 3 closed trades', 90_000, async () => {
        const s = await runState(id)
        const trades = await db().selectFrom('strategy_trades').select('id').where('strategy_id', '=', id).execute()
        return s?.broker.lastOpenTime && s.broker.lastOpenTime >= s.firstActive + 60 * MINUTE && trades.length >= 3 && s.pendingOrder === null ? s : undefined
      })
      const stored = await db().selectFrom('strategy_trades').selectAll().where('strategy_id', '=', id).orderBy('id').execute()
      const last = stored[stored.length - 1]!.exit_time.getTime()
      const expected = await btcMinuteBacktest(t.services.market, { params: PARAMS, capital: 1000, leverage: 2, start: done.warmupFrom, end: last })
      const { worstBps, worstLag } = assertLiveTrades('BTCUSDT', stored, expected.trades)
      console.log(JSON.stringify({ parity_trades: stored.length, worst_price_deviation_bps: Number(worstBps.toFixed(2)), worst_entry_lag_replay_ms: worstLag }))
      // Every fill is one exchange order under its intent's id, and the exchange holds what our fills add up to.
      const picture = await quietPicture(ACCOUNTS.parity, id)
      assert.deepEqual(picture.sent, picture.booked)
      assert.equal(picture.exchangeQty, picture.ledgerQty)
    })

    it('pause with close_positions closes the exchange position with a reduce-only order before answering', async () => {
      const id = strategies.parity!
      const held = await exchangeQty(ACCOUNTS.parity)
      assert.notEqual(held, 0, 'sma_cross with shorts is always in a position after its first cross')
      const res = await call('POST', `/v1/strategies/${id}/pause`, { close_positions: true })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().status, 'paused')
      assert.equal(res.json().stats.open_positions, 0)
      assert.equal(await exchangeQty(ACCOUNTS.parity), 0)
      const close = (await exchangeOrders(ACCOUNTS.parity)).at(-1)!
      assert.equal(close.reduceOnly, true)
      assert.equal(Number(close.executedQty), Math.abs(held))
      const row = (await orders(id)).find((o) => o.client_order_id === close.clientOrderId)
      assert.equal(row?.status, 'filled')
      assert.equal(row?.reduce_only, true)
      assert.equal((await runState(id))!.broker.ledger.arrays.qty[0], 0)
    })

    it('never duplicates an order answered 503 or -1007 after it executed', async () => {
      const id = strategies.unknown!
      await poll('three filled orders', 60_000, async () => ((await filled(id)).length >= 3 && (await runState(id))?.pendingOrder === null ? true : undefined))
      const picture = await quietPicture(ACCOUNTS.unknown, id)
      assert.equal(new Set(picture.sent).size, picture.sent.length, 'no client order id twice')
      assert.deepEqual(picture.sent, picture.booked, 'each sent order booked once as filled, nothing else sent')
      assert.equal(picture.exchangeQty, picture.ledgerQty)
      const left = t.replay!.faults.active().filter((f) => String(f.path).includes(hex(id)))
      assert.deepEqual(left, [], 'both faults met an order')
      // Counted when the answer returns, which may be after the stream booked the fill.
      await poll('both unanswered orders counted unknown', 10_000, async () => ((await counted(metrics.liveOrders, { outcome: 'unknown' })) >= 2 ? true : undefined))
      assert.ok((await counted(metrics.liveOrders, { outcome: 'accepted' })) >= 1)
      assert.ok((await counted(metrics.liveOrderLookups, { outcome: 'found' })) >= 1, 'and found by a look-up')
    })

    it('does not send a "forgotten" order again: it stays unknown until a lookup finds it', async () => {
      const id = strategies.forgot!
      const first = await poll('the first order booked', 60_000, async () => (await filled(id)).find((o) => Number(o.qty) > 0))
      await poll('two more bars', 30_000, async () => ((await runState(id))?.pendingOrder === null ? true : undefined))
      const picture = await quietPicture(ACCOUNTS.forgot, id)
      assert.equal(picture.sent.filter((c) => c === first.client_order_id).length, 1)
      assert.equal(new Set(picture.sent).size, picture.sent.length)
      assert.equal(picture.exchangeQty, picture.ledgerQty)
      const forgets = t.replay!.faults.active().filter((f) => f.forget && String(f.path).includes(hex(id)))
      assert.ok(forgets.length === 0 || forgets[0]!.times! <= 12 - 5, 'the order was looked up and "forgotten" at least five times first')
      // A look-up asks twice (the order, then the recent orders), so five forgets are at least three look-ups.
      assert.ok((await counted(metrics.liveOrderLookups, { outcome: 'not_found' })) >= 3, 'each look-up the exchange forgot counted not found')
    })

    it('an order found nowhere for 10 exchange minutes, with the position unchanged, is booked skipped and the run goes on', async () => {
      const id = strategies.dropped!
      const later = await poll('an order filled after the lost one', 60_000, async () => {
        const rows = await orders(id)
        const lost = rows.find((o) => o.status === 'skipped')
        return lost && rows.some((o) => o.status === 'filled' && o.intent > lost.intent && Number(o.qty) > 0) ? { lost, rows } : undefined
      })
      const picture = await quietPicture(ACCOUNTS.dropped, id)
      assert.equal(picture.sent.filter((c) => c === later.lost.client_order_id).length, 0, 'the lost order never reached the exchange')
      assert.equal(new Set(picture.sent).size, picture.sent.length)
      assert.deepEqual(picture.sent, picture.booked)
      assert.equal(picture.exchangeQty, picture.ledgerQty)
      // It stayed unknown, looked up after sending and again at later bars, for 10 exchange minutes.
      const counter = t.replay!.faults.active().find((f) => f.latencyMs === 1 && String(f.path).includes(hex(id)))!
      assert.ok(1000 - counter.times! >= 4 + 3, `looked up ${1000 - counter.times!} times`)
      const next = later.rows.find((o) => o.intent > later.lost.intent)!
      assert.ok(next.created_at.getTime() - later.lost.created_at.getTime() >= (10 * MINUTE) / SPEED - 500, `next intent ${next.created_at.getTime() - later.lost.created_at.getTime()} ms later`)
    })

    it('reconciliation after a reconnect finds a position the run cannot explain and moves the strategy to error', async () => {
      const id = strategies.foreign!
      await poll('a first fill', 60_000, async () => ((await filled(id)).some((o) => Number(o.qty) > 0) && (await runState(id))?.pendingOrder === null ? true : undefined))
      // Someone trades the same symbol on the account, and the user stream's events of it are lost.
      const mismatches = await counted(metrics.reconciliationMismatches, { mode: 'live' })
      const remove = t.replay!.faults.add({ userEvents: 'drop' })
      const manual = await exchange(ACCOUNTS.foreign).placeOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.002', clientOrderId: 'manual-1' })
      assert.equal(manual.kind, 'ok')
      remove()
      const before = (await exchangeOrders(ACCOUNTS.foreign)).length
      t.replay!.faults.disconnectStreams()
      const strategy = await poll('the strategy in error', 30_000, async () => {
        const s = (await call('GET', `/v1/strategies/${id}`)).json()
        return s.status === 'error' ? s : undefined
      })
      assert.equal(strategy.status, 'error')
      const mine = await errorOf(id)
      assert.equal(mine?.code, 'POSITION_MISMATCH')
      assert.equal((await counted(metrics.reconciliationMismatches, { mode: 'live' })) - mismatches, 1, 'the mismatch counted once')
      assert.match(mine!.message, /exchange holds a position/)
      const run = await db().selectFrom('strategy_runs').selectAll().where('strategy_id', '=', id).executeTakeFirstOrThrow()
      assert.notEqual(run.ended_at, null)
      assert.equal((await exchangeOrders(ACCOUNTS.foreign)).length, before, 'no order after the mismatch')
    })

    it('a revoked key (-2015) moves the strategy to error with strategy.error', async () => {
      const id = strategies.revoked!
      await poll('a first bar acted on', 60_000, async () => ((await runState(id))?.broker.lastOpenTime ? true : undefined))
      // As if the key were deleted on Binance: the exchange no longer knows it.
      await db().updateTable('exchange_keys').set({ api_key_enc: t.services.secrets.seal(account('GONE').apiKey) }).where('id', '=', keyIds.revoked!).execute()
      t.replay!.faults.disconnectStreams()
      await poll('the strategy in error', 30_000, async () => ((await call('GET', `/v1/strategies/${id}`)).json().status === 'error' ? true : undefined))
      const mine = await errorOf(id)
      assert.equal(mine?.code, 'KEY_REVOKED')
      assert.match(mine!.message, /-2015/)
    })

    it('three margin refusals (-2019) in a row move the strategy to error; nothing was bought', async () => {
      const id = strategies.poor!
      await poll('the strategy in error', 60_000, async () => ((await call('GET', `/v1/strategies/${id}`)).json().status === 'error' ? true : undefined))
      const mine = await errorOf(id)
      assert.equal(mine?.code, 'MARGIN_REFUSED')
      assert.match(mine!.message, /-2019/)
      const rows = await orders(id)
      assert.deepEqual(rows.map((o) => o.status), ['skipped', 'skipped', 'skipped'])
      assert.equal(await exchangeQty(ACCOUNTS.poor), 0)
    })

    it('another process resumes a live run with the same position, reconciles, and sends no order twice', async () => {
      const id = strategies.unknown!
      const before = (await filled(id)).length
      await pool.stop()
      successor = new RunnerPool({ db: db(), market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), secrets: t.services.secrets })
      successor.start()
      await poll('two more fills under the new owner', 60_000, async () => ((await filled(id)).length >= before + 2 && (await runState(id))?.pendingOrder === null ? true : undefined))
      const run = await db().selectFrom('strategy_runs').selectAll().where('strategy_id', '=', id).executeTakeFirstOrThrow()
      assert.equal(run.lease_owner, successor.owner)
      assert.equal(run.run, 1, 'the same run, not a new one')
      const picture = await quietPicture(ACCOUNTS.unknown, id)
      assert.equal(new Set(picture.sent).size, picture.sent.length)
      assert.deepEqual(picture.sent, picture.booked)
      assert.equal(picture.exchangeQty, picture.ledgerQty)
    })
  })
}
