import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { clientAlgoIdPrefix } from '../../src/live/protection/client-algo-ids.js'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { type SignedInUser, signIn } from '../auth/bearer.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { poll } from '../support/poll.js'
import { memoryLogger } from '../support/secret-scan.js'
import { minuteBacktest } from './backtest-parity.js'
import { account, type Account, hex, liveHarness, nothingPending } from './live-accounts.js'
import { assertLiveTrades } from './live-parity.js'

const MINUTE = 60_000
// 1m bars close every two wall seconds from 2025-06-17 06:00 UTC (inside the recorded minutes of BTCUSDT and
// ETHUSDT). A run's orders trail the backtest's fills by the time its closed klines take to arrive (the replay sends
// them once a wall second) and to be acted on: at speed 120 and 60 that was 1.6–2.3 replay minutes, and a volatile
// minute of ETHUSDT put prices up to 25 bps from the backtest's.
const SPEED = 30
const REPLAY_START = Date.UTC(2025, 5, 17, 6, 0, 0)
const SYMBOLS = ['BTCUSDT', 'ETHUSDT']
const MOMENTUM = { lookback: 5, rebalance_every: 3, long_count: 1, short_count: 1 }
const ROTATION = readFileSync(new URL('../../examples/strategies/momentum-rotation.js', import.meta.url), 'utf8')
const ACCOUNTS = { parity: account('MPARITY'), unknown: account('MUNKNOWN'), module: account('MMODULE'), reversal: account('MREVERSAL') }

for (const backend of backends()) {
  describe(`live many-symbol runs on the exchange (${backend})`, () => {
    let t: TestApp
    let pool: RunnerPool
    let user: SignedInUser
    const log = memoryLogger()
    const keyIds: Record<string, string> = {}
    const strategies: Record<string, string> = {}
    const harness = liveHarness(
      () => t,
      () => user,
    )
    const { db, call, exchange, filled, orders, runState, exchangeQty, exchangeOrders, quietPicture, registerKey, deploy } = harness
    const create = (name: string, fields: Record<string, unknown>) => harness.create(name, 'BTCUSDT', { symbols: SYMBOLS, capital: '2000', ...fields })
    /** Every symbol's position on the exchange, in the run's order. */
    const exchangeQtys = async (a: Account) => Promise.all(SYMBOLS.map((symbol) => exchangeQty(a, symbol)))
    const tradesOf = (id: string) => db().selectFrom('strategy_trades').selectAll().where('strategy_id', '=', id).orderBy('id').execute()
    /**
     * Pauses with close_positions and checks the pause closed every symbol on the exchange with reduce-only orders
     * booked filled, and kept no close intent for a symbol it found flat.
     */
    const pauseFlat = async (name: keyof typeof ACCOUNTS) => {
      const id = strategies[name]!
      const a = ACCOUNTS[name]
      const runner = pool.runners.get(id)
      const held = await exchangeQtys(a)
      const res = await call('POST', `/v1/strategies/${id}/pause`, { close_positions: true })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().status, 'paused')
      assert.equal(res.json().stats.open_positions, 0)
      assert.deepEqual(await exchangeQtys(a), [0, 0], 'flat on every symbol on the exchange')
      assert.deepEqual((await runState(id))!.broker.ledger.arrays.qty, [0, 0], 'flat on every symbol in the ledger')
      const rows = await orders(id)
      for (const [s, symbol] of SYMBOLS.entries()) {
        if (held[s] === 0) continue
        const close = (await exchangeOrders(a, symbol)).at(-1)!
        assert.equal(close.reduceOnly, true, `${symbol}'s close is reduce-only`)
        assert.equal(Number(close.executedQty), Math.abs(held[s]!))
        const row = rows.find((o) => o.client_order_id === close.clientOrderId)
        assert.deepEqual([row?.symbol, row?.status, row?.reduce_only], [symbol, 'filled', true])
      }
      assert.ok(rows.every((o) => o.status !== 'new'), 'no intent is left waiting')
      const closes = rows.filter((o) => o.reduce_only)
      assert.deepEqual(closes.map((o) => [o.symbol, o.status]), SYMBOLS.filter((_, s) => held[s] !== 0).map((symbol) => [symbol, 'filled']), 'a close intent for each held symbol only')
      // The runner learns its run ended and finishes what it was doing: anything it would log about the
      // closes it heard on the user stream is logged by then.
      await poll(`the runner of ${name} to stop`, 30_000, () => (pool.runners.has(id) ? undefined : true))
      await runner?.idle()
      return held
    }

    before(async () => {
      t = await startTestApp(backend, {}, { replay: { speed: SPEED, replayStart: REPLAY_START, accounts: Object.values(ACCOUNTS).map((a) => ({ ...a, balances: { USDT: '10000' } })) } })
      user = await signIn(t)
      for (const [name, a] of Object.entries(ACCOUNTS)) keyIds[name] = await registerKey(name, a)
      pool = new RunnerPool({ db: db(), market: t.services.market, wsUrl: t.replay!.wsUrl, log: log.logger, signals: t.services.runSignals, secrets: t.services.secrets })
      pool.start()
      strategies.parity = await create('parity', { template_id: 'cross_sectional_momentum', params: MOMENTUM })
      strategies.unknown = await create('unknown', { template_id: 'cross_sectional_momentum', params: { ...MOMENTUM, rebalance_every: 2 } })
      // A wide stop (not reached in the test's minutes): each side's protective order stands while the run reverses.
      strategies.reversal = await create('reversal', { template_id: 'cross_sectional_momentum', params: { ...MOMENTUM, rebalance_every: 2 }, exits: { stop_loss: '0.05' } })
      const uploaded = await call('POST', '/v1/templates', { name: 'rotation', source: ROTATION })
      assert.equal(uploaded.statusCode, 201, uploaded.body)
      strategies.module = await create('module', { template_id: uploaded.json().id, params: { lookback: 4, rebalance: 2, top: 1, min_return: -1 } })
      // One run's first ETHUSDT order executes, then answers 503; every lookup of it by id says "unknown order"
      // a while, and its order events are lost: only a REST lookup at a later step can settle it.
      const faults = t.replay!.faults
      const unknown = hex(strategies.unknown)
      faults.add({ path: new RegExp(`symbol=ETHUSDT&.*newClientOrderId=pp-${unknown}-`), executeThen: 503, times: 1 })
      faults.add({ path: new RegExp(`symbol=ETHUSDT&.*origClientOrderId=pp-${unknown}-`), forget: true, times: 12 })
      faults.add({ userEvents: 'drop', event: 'ORDER_TRADE_UPDATE', account: ACCOUNTS.unknown.apiKey })
      for (const name of Object.keys(ACCOUNTS)) await deploy(strategies[name]!, keyIds[name]!)
    })
    after(async () => {
      await pool.stop()
      await t.close()
    })

    it('deploys live with the one-symbol checks: a symbol another live run trades on the account is 409, capital above the account 402; both change nothing', async () => {
      const run = await db().selectFrom('strategy_runs').selectAll().where('strategy_id', '=', strategies.parity!).executeTakeFirstOrThrow()
      assert.deepEqual([run.dry_run, run.symbols, run.exchange_key_id], [false, SYMBOLS, keyIds.parity])
      const overlap = await call('POST', '/v1/strategies', { name: 'eth', template_id: 'sma_cross', params: { fast: 3, slow: 8 }, symbols: ['ETHUSDT'], timeframe: '1m', capital: '500', leverage: 2 })
      const clash = await call('POST', `/v1/strategies/${overlap.json().id}/deploy`, { dry_run: false, exchange_key_id: keyIds.parity })
      assert.equal(clash.statusCode, 409, clash.body)
      assert.match(clash.json().error.message, new RegExp(`strategy ${strategies.parity} already trades ETHUSDT on this account`))
      const big = await create('too big', { template_id: 'cross_sectional_momentum', params: MOMENTUM, symbols: ['SOLUSDT', 'XRPUSDT'], capital: '9000' })
      const poor = await call('POST', `/v1/strategies/${big}/deploy`, { dry_run: false, exchange_key_id: keyIds.parity })
      assert.equal(poor.statusCode, 402, poor.body)
      assert.match(poor.json().error.message, /exchange account/)
      for (const id of [overlap.json().id, big]) assert.equal((await call('GET', `/v1/strategies/${id}`)).json().status, 'draft')
    })

    it('trades both symbols as the backtest of the same bars does, at prices within a few basis points; the exchange holds what the ledger holds', async () => {
      const id = strategies.parity!
      const done = await poll('the live run to act on 45 steps with 4 closed trades', 120_000, async () => {
        const s = await runState(id)
        const trades = await tradesOf(id)
        return s?.broker.lastOpenTime && s.broker.lastOpenTime >= s.firstActive + 45 * MINUTE && trades.length >= 4 && nothingPending(s) ? s : undefined
      })
      const stored = await tradesOf(id)
      const last = Math.max(...stored.map((r) => r.exit_time.getTime()))
      const { result } = await minuteBacktest(t.services.market, { templateId: 'cross_sectional_momentum', params: MOMENTUM, capital: 2000, leverage: 2, symbols: SYMBOLS, start: done.warmupFrom, end: last })
      const worst = { bps: 0, lag: 0 }
      for (const symbol of SYMBOLS) {
        const mine = stored.filter((r) => r.symbol === symbol)
        // Sized at the step's closes on the run's equity (the backtest: at the next opens): quantities within 2 %.
        // A step waits for every symbol's bar: its orders go out up to a few replay minutes after the close.
        const { worstBps, worstLag } = assertLiveTrades(symbol, mine, result.trades.filter((tr) => tr.symbol === symbol), { maxQtyPct: 2, maxLagMs: 6 * MINUTE })
        worst.bps = Math.max(worst.bps, worstBps)
        worst.lag = Math.max(worst.lag, worstLag)
      }
      assert.deepEqual([...new Set(stored.map((r) => r.symbol))].sort(), SYMBOLS, 'both symbols traded')
      console.log(JSON.stringify({ multi_parity_trades: stored.length, worst_price_deviation_bps: Number(worst.bps.toFixed(2)), worst_entry_lag_replay_ms: worst.lag }))
      const picture = await quietPicture(ACCOUNTS.parity, id, SYMBOLS)
      assert.equal(new Set(picture.sent).size, picture.sent.length, 'no client order id twice')
      assert.deepEqual(picture.sent, picture.booked, 'every exchange order is one booked fill, and nothing else was sent')
      assert.deepEqual(picture.exchangeQtys, picture.ledgerQtys)
    })

    it('pause with close_positions closes every symbol on the exchange with reduce-only orders before answering', async () => {
      const held = await pauseFlat('parity')
      assert.ok(held.every((q) => q !== 0), `momentum 1 long 1 short holds both symbols (${held})`)
    })

    it("an unknown outcome on one symbol's order is looked up, never sent again; the run's other symbol trades on its own order path", async () => {
      const id = strategies.unknown!
      const faults = t.replay!.faults
      await poll('the 503 fault to meet the first ETHUSDT order', 60_000, () => (faults.active().some((f) => f.executeThen && String(f.path).includes(hex(id))) ? undefined : true))
      const first = await poll('its ETHUSDT order booked', 60_000, async () => (await filled(id)).find((o) => o.symbol === 'ETHUSDT' && Number(o.qty) > 0))
      await poll('two more filled orders, nothing pending', 60_000, async () => {
        const later = (await filled(id)).filter((o) => o.intent > first.intent && Number(o.qty) > 0)
        const s = await runState(id)
        return later.length >= 2 && s && nothingPending(s) ? true : undefined
      })
      const picture = await quietPicture(ACCOUNTS.unknown, id, SYMBOLS)
      assert.equal(picture.sent.filter((c) => c === first.client_order_id).length, 1, 'the order answered 503 went out once')
      assert.equal(new Set(picture.sent).size, picture.sent.length, 'no client order id twice')
      assert.deepEqual(picture.sent, picture.booked)
      assert.deepEqual(picture.exchangeQtys, picture.ledgerQtys)
      const forgets = faults.active().filter((f) => f.forget && String(f.path).includes(hex(id)))
      assert.ok(forgets.length === 0 || forgets[0]!.times! <= 12 - 5, 'the order was looked up and "forgotten" at least five times first')
      const btc = (await filled(id)).filter((o) => o.symbol === 'BTCUSDT' && Number(o.qty) > 0)
      assert.ok(btc.length >= 1, 'BTCUSDT traded too')
    })

    it("a reversal's order goes out only after the old side's protective orders are cancelled (never at twice the target)", async () => {
      const id = strategies.reversal!
      const a = ACCOUNTS.reversal
      const prefix = clientAlgoIdPrefix(id)
      /** A filled order of the run that took a symbol from one side to the other, with the position it left. */
      const reversals = async (symbol: string) => {
        let position = 0
        const found: { time: number; from: number; to: number }[] = []
        const list = (await exchangeOrders(a, symbol)).filter((o) => Number(o.executedQty) > 0).sort((x, y) => x.updateTime - y.updateTime)
        for (const o of list) {
          const next = Number((position + (o.side === 'BUY' ? 1 : -1) * Number(o.executedQty)).toFixed(6))
          if (position !== 0 && next !== 0 && Math.sign(next) !== Math.sign(position) && o.clientOrderId.startsWith('pp-')) found.push({ time: o.updateTime, from: position, to: next })
          position = next
        }
        return found
      }
      // Once a second: the exchange's request weight is the runs' too.
      const seen = await poll(
        'the run to reverse a symbol',
        150_000,
        async () => {
          const all = (await Promise.all(SYMBOLS.map(async (symbol) => (await reversals(symbol)).map((r) => ({ ...r, symbol }))))).flat()
          return all.length > 0 ? all : undefined
        },
        1000,
      )
      for (const reversal of seen) {
        const algos = await exchange(a).algo.all(reversal.symbol, { startTime: REPLAY_START - 3_600_000, limit: 1000 })
        assert.equal(algos.kind, 'ok')
        const closeSide = reversal.from > 0 ? 'SELL' : 'BUY'
        const oldSide = (algos.kind === 'ok' ? algos.value : []).filter((o) => o.clientAlgoId.startsWith(prefix) && o.side === closeSide && o.createTime <= reversal.time)
        assert.ok(oldSide.length > 0, `the ${reversal.symbol} position before the reversal at ${reversal.time} was protected`)
        // Standing until the fill, the exchange would end a close-all stop there (EXPIRED at the reversal's time), and
        // one that fired while the order flew would have closed the old side first: the order, sized from the old
        // side, would then open the new one at twice the target.
        const standing = oldSide.filter((o) => o.algoStatus === 'NEW' || o.updateTime >= reversal.time)
        assert.deepEqual(
          standing.map((o) => [o.clientAlgoId, o.algoStatus, o.updateTime]),
          [],
          `every protective order of the old ${reversal.symbol} side was cancelled by the run before its reversal filled at ${reversal.time}`,
        )
        assert.ok(oldSide.some((o) => o.algoStatus === 'CANCELED'))
      }
      const picture = await quietPicture(a, id, SYMBOLS)
      assert.deepEqual(picture.sent, picture.booked)
      assert.deepEqual(picture.exchangeQtys, picture.ledgerQtys)
    })

    it("a user's many-symbol module trades live; pause with close_positions leaves the account flat", async () => {
      const id = strategies.module!
      await poll('the module run to hold a position', 60_000, async () => {
        const s = await runState(id)
        return s && nothingPending(s) && s.broker.ledger.arrays.qty.some((q) => q !== 0) ? true : undefined
      })
      const picture = await quietPicture(ACCOUNTS.module, id, SYMBOLS)
      assert.deepEqual(picture.sent, picture.booked)
      assert.deepEqual(picture.exchangeQtys, picture.ledgerQtys)
      const held = await pauseFlat('module')
      assert.equal(held.filter((q) => q !== 0).length, 1, `rotation to the top 1 holds one symbol, the other is flat (${held})`)
    })

    it('a normal pause with close_positions logs no error', () => {
      const errors = log.lines().filter((line) => (JSON.parse(line.text) as { level: number }).level >= 50)
      assert.deepEqual(errors.map((line) => line.text), [])
    })
  })
}
