import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { type SignedInUser, signIn } from '../auth/bearer.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { poll } from '../support/poll.js'
import { account, hex, liveHarness } from './live-accounts.js'

const MINUTE = 60_000
// 1m bars close twice a wall second from 2025-06-17 06:00 UTC (inside the recorded minutes).
const SPEED = 120
const REPLAY_START = Date.UTC(2025, 5, 17, 6, 0, 0)
const ACCOUNTS = { event: account('EVENT'), dropped: account('DROPEV'), delayed: account('DELAYEV'), late: account('LATE'), stray: account('STRAY'), foreign: account('FOREIGNO') }
type Name = keyof typeof ACCOUNTS

for (const backend of backends()) {
  describe(`live runs on the user data stream (${backend})`, () => {
    let t: TestApp
    let pool: RunnerPool
    let user: SignedInUser
    const keyIds = {} as Record<Name, string>
    const strategies = {} as Record<Name, string>
    const { db, exchange, orders, filled, exchangeOrders, exchangeQty, runState, create, deploy, registerKey, errorOf, exchangeNow, quietPicture } = liveHarness(
      () => t,
      () => user,
    )
    const faults = () => t.replay!.faults
    /** Removers of the faults that keep the 'dropped' run's first order unknown. */
    const droppedFaults: (() => void)[] = []
    /** A limit price 3% away from the mark (inside Binance's percent-price band, far from filling within the test). */
    const awayFromMark = async (name: Name, side: 'BUY' | 'SELL') => {
      const answer = await exchange(ACCOUNTS[name]).positions('BTCUSDT')
      assert.equal(answer.kind, 'ok')
      const mark = answer.kind === 'ok' ? Number(answer.value[0]!.markPrice) : Number.NaN
      return (mark * (side === 'BUY' ? 0.97 : 1.03)).toFixed(1)
    }
    /**
     * The first order of a run on the exchange. Our ledger is polled first and the exchange at most every
     * 250 ms: the test's reads share this process's request-weight budget with the runners.
     */
    const firstSent = async (name: Name) => {
      const intent = await poll(`${name}'s first intent`, 60_000, async () => (await orders(strategies[name])).find((o) => o.intent === 1))
      let lastRead = 0
      return poll(`${name}'s first order on the exchange`, 30_000, async () => {
        if (Date.now() - lastRead < 250) return undefined
        lastRead = Date.now()
        return (await exchangeOrders(ACCOUNTS[name])).find((o) => o.clientOrderId === intent.client_order_id)
      })
    }
    /** Every order the exchange holds of a run went out once and is booked filled; the exchange's position is the ledger's. */
    const assertOnceAndAgreed = async (name: Name) => {
      const picture = await quietPicture(ACCOUNTS[name], strategies[name])
      assert.equal(new Set(picture.sent).size, picture.sent.length, 'no client order id twice')
      assert.deepEqual(picture.sent, picture.booked, 'one exchange order per booked intent')
      assert.equal(picture.exchangeQty, picture.ledgerQty, 'the exchange holds what the ledger holds')
    }

    before(async () => {
      t = await startTestApp(backend, {}, { replay: { speed: SPEED, replayStart: REPLAY_START, accounts: Object.values(ACCOUNTS).map((a) => ({ ...a, balances: { USDT: '10000' } })) } })
      user = await signIn(t)
      for (const name of Object.keys(ACCOUNTS) as Name[]) {
        keyIds[name] = await registerKey(name, ACCOUNTS[name])
        strategies[name] = await create(name)
      }
      const sends = (name: Name) => new RegExp(`newClientOrderId=pp-${hex(strategies[name])}-`)
      const lookups = (name: Name) => new RegExp(`origClientOrderId=pp-${hex(strategies[name])}-`)
      for (const name of ['event', 'dropped'] as const) {
        // The first order executes but its answer is lost, and REST cannot find it: GET order "forgets" it
        // and the account's allOrders fails. Only the user stream can tell.
        faults().add({ path: sends(name), executeThen: 503, times: 1 })
        const forget = faults().add({ path: lookups(name), forget: true })
        // (The runner's allOrders lookup names a startTime; this test's own reads do not.)
        const allOrders = faults().add({ path: /^\/fapi\/v1\/allOrders\?.*startTime=/, account: ACCOUNTS[name].apiKey, status: 503 })
        if (name === 'dropped') droppedFaults.push(forget, allOrders)
      }
      // …and for one of them the stream loses the order's events too.
      droppedFaults.push(faults().add({ userEvents: 'drop', event: 'ORDER_TRADE_UPDATE', account: ACCOUNTS.dropped.apiKey }))
      // The first answer is lost but a lookup finds the order at once; its events come 3 s late.
      faults().add({ path: sends('delayed'), executeThen: 503, times: 1 })
      faults().add({ userEvents: 'delay', latencyMs: 3_000, event: 'ORDER_TRADE_UPDATE', account: ACCOUNTS.delayed.apiKey })
      // The first order reaches the exchange 20 s (40 exchange minutes) after it was sent: long after the
      // run gave it up as never placed (10 exchange minutes, the position unchanged).
      faults().add({ path: sends('late'), executeLate: true, latencyMs: 20_000, times: 1 })
      pool = new RunnerPool({ db: db(), market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals, secrets: t.services.secrets })
      pool.start()
      for (const name of Object.keys(ACCOUNTS) as Name[]) await deploy(strategies[name], keyIds[name])
    })
    after(async () => {
      await pool.stop()
      await t.close()
    })

    it('ORDER_TRADE_UPDATE settles an order whose outcome REST could not learn', async () => {
      const id = strategies.event
      const sent = await firstSent('event')
      const booked = await poll('the first order booked', 30_000, async () => (await orders(id)).find((o) => o.client_order_id === sent.clientOrderId && o.status === 'filled'))
      assert.equal(Number(booked.qty), Number(sent.executedQty))
      assert.equal(booked.side, sent.side.toLowerCase())
      // The lookups still "forget" it and allOrders still fails: nothing but the event could have booked it.
      const left = faults().active().filter((f) => f.forget && String(f.path).includes(hex(id)))
      assert.equal(left.length, 1)
      await poll('nothing pending', 10_000, async () => ((await runState(id))?.pendingOrder === null ? true : undefined))
      await assertOnceAndAgreed('event')
    })

    it('a dropped ORDER_TRADE_UPDATE is caught by reconciliation: the fill is booked exactly once and the position agrees', async () => {
      const id = strategies.dropped
      const sent = await firstSent('dropped')
      const state = await poll('three more bars with the order still unknown', 30_000, async () => {
        const s = await runState(id)
        return s?.pendingOrder === sent.clientOrderId && s.broker.lastOpenTime! >= sent.updateTime + 3 * MINUTE ? s : undefined
      })
      assert.equal(state.broker.ledger.arrays.qty[0], 0, 'not booked: its event was dropped and REST could not find it')
      assert.notEqual(await exchangeQty(ACCOUNTS.dropped), 0, 'yet it executed')
      // REST works again; the user stream reconnects (the fault closes its socket) and the run reconciles.
      for (const remove of droppedFaults) remove()
      faults().closeUserStreams(ACCOUNTS.dropped.apiKey)
      await poll('the order booked', 30_000, async () => ((await orders(id)).find((o) => o.client_order_id === sent.clientOrderId)?.status === 'filled' ? true : undefined))
      await poll('a later order booked too', 60_000, async () => ((await filled(id)).length >= 2 && (await runState(id))?.pendingOrder === null ? true : undefined))
      await assertOnceAndAgreed('dropped')
    })

    it('a delayed ORDER_TRADE_UPDATE of an order a lookup already booked is not booked again', async () => {
      const id = strategies.delayed
      const sent = await firstSent('delayed')
      await poll('the first order booked', 30_000, async () => ((await orders(id)).find((o) => o.client_order_id === sent.clientOrderId)?.status === 'filled' ? true : undefined))
      const bookedAt = Date.now()
      // Past the events' 3 s delay (and two more orders' events, all late), then compare.
      await poll('two more orders and 4 s', 60_000, async () => ((await filled(id)).length >= 3 && Date.now() - bookedAt > 4_000 && (await runState(id))?.pendingOrder === null ? true : undefined))
      assert.ok(!faults().active().some((f) => f.path !== undefined && String(f.path).includes(hex(id))), 'the lost answer was met')
      await assertOnceAndAgreed('delayed')
      assert.equal((await db().selectFrom('strategies').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status, 'deployed')
    })

    it('an order given up as never placed that executes later is booked once from its trades, never sent again', async () => {
      const id = strategies.late
      const skipped = await poll('the first intent given up', 60_000, async () => (await orders(id)).find((o) => o.intent === 1 && o.status === 'skipped'))
      assert.equal((await exchangeOrders(ACCOUNTS.late)).filter((o) => o.clientOrderId === skipped.client_order_id).length, 0, 'not on the exchange yet')
      const late = await poll('the late order booked from its trades', 60_000, async () => (await orders(id)).find((o) => o.intent === 1 && o.status === 'filled'))
      const trades = await exchange(ACCOUNTS.late).userTrades('BTCUSDT', { limit: 1000 })
      assert.equal(trades.kind, 'ok')
      const order = (await exchangeOrders(ACCOUNTS.late)).find((o) => o.clientOrderId === skipped.client_order_id)!
      const own = trades.kind === 'ok' ? trades.value.filter((tr) => tr.orderId === order.orderId) : []
      assert.equal(Number(late.qty), own.reduce((sum, tr) => sum + Number(tr.qty), 0))
      assert.equal(Number(late.price), Number(own[0]!.price))
      await poll('nothing pending', 30_000, async () => ((await runState(id))?.pendingOrder === null ? true : undefined))
      await assertOnceAndAgreed('late')
      assert.equal((await db().selectFrom('strategies').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status, 'deployed')
    })

    it('a stray open order of ours is cancelled at reconciliation, and the run goes on', async () => {
      const id = strategies.stray
      await poll('a first fill', 60_000, async () => ((await filled(id)).some((o) => Number(o.qty) > 0) && (await runState(id))?.pendingOrder === null ? true : undefined))
      const strayId = `pp-${hex(id)}-9-1`
      const placed = await exchange(ACCOUNTS.stray).placeOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', price: await awayFromMark('stray', 'BUY'), quantity: '0.002', clientOrderId: strayId })
      assert.equal(placed.kind, 'ok')
      faults().closeUserStreams(ACCOUNTS.stray.apiKey)
      await poll('the stray order cancelled', 30_000, async () => ((await exchangeOrders(ACCOUNTS.stray)).find((o) => o.clientOrderId === strayId)?.status === 'CANCELED' ? true : undefined))
      const before = (await filled(id)).length
      await poll('another fill', 60_000, async () => ((await filled(id)).length > before && (await runState(id))?.pendingOrder === null ? true : undefined))
      assert.equal((await db().selectFrom('strategies').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status, 'deployed')
    })

    it("someone else's open order on the symbol moves the strategy to error (FOREIGN_ORDER), nothing sent after it", async () => {
      const id = strategies.foreign
      await poll('a first fill', 60_000, async () => ((await filled(id)).some((o) => Number(o.qty) > 0) && (await runState(id))?.pendingOrder === null ? true : undefined))
      const placed = await exchange(ACCOUNTS.foreign).placeOrder({ symbol: 'BTCUSDT', side: 'SELL', type: 'LIMIT', timeInForce: 'GTC', price: await awayFromMark('foreign', 'SELL'), quantity: '0.002', clientOrderId: 'manual-limit' })
      assert.equal(placed.kind, 'ok')
      // Its ORDER_TRADE_UPDATE (NEW) tells the run at once; without the stream, the next reconnect would.
      await poll('the strategy in error', 30_000, async () => ((await db().selectFrom('strategies').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status === 'error' ? true : undefined))
      const failure = await errorOf(id)
      assert.equal(failure?.code, 'FOREIGN_ORDER')
      assert.match(failure!.message, /manual-limit/)
      const atError = (await exchangeOrders(ACCOUNTS.foreign)).length
      const errorAt = await exchangeNow()
      await poll('five more exchange minutes', 30_000, async () => ((await exchangeNow()) > errorAt + 5 * MINUTE ? true : undefined))
      assert.equal((await exchangeOrders(ACCOUNTS.foreign)).length, atError, 'no order after it')
      await assertOnceAndAgreed('foreign')
      assert.equal((await exchangeOrders(ACCOUNTS.foreign)).find((o) => o.clientOrderId === 'manual-limit')?.status, 'NEW', 'left alone: not ours to cancel')
    })
  })
}
