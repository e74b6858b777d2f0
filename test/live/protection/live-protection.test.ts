import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { RunnerPool } from '../../../src/live/runner/runner-pool.js'
import { clientAlgoIdPrefix, protectiveKindOf } from '../../../src/live/protection/client-algo-ids.js'
import { PROTECTION_LOST } from '../../../src/live/protection/alarm.js'
import type { BinanceAlgoOrder } from '../../../src/trading/binance/algo-orders.js'
import { type SignedInUser, signIn } from '../../auth/bearer.js'
import { startTestApp, type TestApp } from '../../support/app.js'
import { backends } from '../../support/database.js'
import { poll } from '../../support/poll.js'
import { type Account, account, liveHarness } from '../live-accounts.js'

// 1m bars close every two wall seconds from 2025-06-17 06:00 UTC (inside the recorded minutes).
const SPEED = 30
const REPLAY_START = Date.UTC(2025, 5, 17, 6, 0, 0)
/** One account per run: positions net per account and symbol. */
const ACCOUNTS = { stop: account('STOP'), take: account('TAKE'), trail: account('TRAIL'), rejected: account('REJ') }
type Name = keyof typeof ACCOUNTS
/** Tight levels, so the recorded minutes cross them within a few bars. */
const EXITS: Record<Name, Record<string, string>> = {
  stop: { stop_loss: '0.0006' },
  take: { take_profit: '0.0006' },
  trail: { trailing_stop: '0.001' },
  rejected: { stop_loss: '0.0002' },
}
const REASON = { stop: 'stop_loss', take: 'take_profit', trail: 'trailing_stop', rejected: 'stop_loss' } as const

/**
 * A check that reads the exchange at most every 250 ms: the runs share the replay's IP weight budget (2,400 a
 * minute) with these reads, and a poll every 20 ms of allOrders (weight 5) would spend it for them.
 */
function paced<T>(check: () => Promise<T | undefined>): () => Promise<T | undefined> {
  let last = 0
  return async () => {
    if (Date.now() - last < 250) return undefined
    last = Date.now()
    return check()
  }
}

for (const backend of backends()) {
  describe(`live runs hold their protection on the exchange (${backend})`, () => {
    let t: TestApp
    let pool: RunnerPool
    let user: SignedInUser
    const keyIds: Record<string, string> = {}
    const strategies: Record<string, string> = {}
    const harness = liveHarness(
      () => t,
      () => user,
    )
    const { db, exchange, create, deploy, registerKey, quietPicture } = harness
    const exitOrders = (id: string, reason: string) =>
      db().selectFrom('strategy_orders').selectAll().where('strategy_id', '=', id).where('exit_reason', '=', reason).orderBy('intent').execute()
    const trades = (id: string) => db().selectFrom('strategy_trades').selectAll().where('strategy_id', '=', id).orderBy('id').execute()
    const algoHistory = async (a: Account): Promise<BinanceAlgoOrder[]> => {
      const answer = await exchange(a).algo.all('BTCUSDT', { startTime: REPLAY_START - 3_600_000, limit: 1000 })
      assert.equal(answer.kind, 'ok')
      return answer.kind === 'ok' ? answer.value : []
    }
    /** The exchange's fills of orders under protective ids of `letter` (the triggered children, or an alarm's close), by order. */
    const protectiveFills = async (name: Name, letter: string) => {
      const prefix = clientAlgoIdPrefix(strategies[name]!)
      const orders = await harness.exchangeOrders(ACCOUNTS[name])
      return orders.filter((o) => o.clientOrderId.startsWith(`${prefix}${letter}`) && Number(o.executedQty) > 0)
    }

    before(async () => {
      t = await startTestApp(backend, { RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000' }, {
        replay: { speed: SPEED, replayStart: REPLAY_START, accounts: Object.values(ACCOUNTS).map((a) => ({ ...a, balances: { USDT: '10000' } })) },
      })
      await t.app.listen({ host: '127.0.0.1', port: 0 })
      user = await signIn(t)
      // The stop run hears no ALGO_UPDATE at all: its fills come from ORDER_TRADE_UPDATE and the REST check.
      t.replay!.faults.add({ userEvents: 'drop', event: 'ALGO_UPDATE', times: 100_000, account: ACCOUNTS.stop.apiKey })
      // The take-profit run hears TRIGGERED before its child's fill; the others the fill first (the replay's default).
      t.replay!.faults.add({ algoEvents: 'triggered-first', times: 100_000, account: ACCOUNTS.take.apiKey })
      // The rejected run's first trigger fails its margin check.
      t.replay!.faults.add({ algo: 'reject', times: 1, account: ACCOUNTS.rejected.apiKey })
      for (const [name, a] of Object.entries(ACCOUNTS)) keyIds[name] = await registerKey(name, a)
      pool = new RunnerPool({ db: db(), market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals, secrets: t.services.secrets })
      pool.start()
      for (const name of Object.keys(ACCOUNTS) as Name[]) strategies[name] = await create(name, 'BTCUSDT', { exits: EXITS[name] })
      for (const name of Object.keys(ACCOUNTS)) await deploy(strategies[name]!, keyIds[name]!)
    })
    after(async () => {
      await pool.stop()
      await t.close()
    })

    for (const name of ['stop', 'take', 'trail'] as const) {
      it(`a ${REASON[name]} the exchange triggers is booked once as an exchange-side close (${name === 'stop' ? 'ALGO_UPDATE dropped' : name === 'take' ? 'TRIGGERED before the fill' : 'the fill before TRIGGERED'}), fills equal the exchange's`, async () => {
        const id = strategies[name]!
        const a = ACCOUNTS[name]
        const letter = { stop: 's', take: 't', trail: 'r' }[name]
        const booked = await poll(`a ${REASON[name]} booked`, 120_000, async () => (await trades(id)).find((r) => r.exit_reason === REASON[name]))
        // The booked exit is a triggered child's fill, at the exchange's price.
        const children = await protectiveFills(name, letter)
        const child = children.find((o) => Math.abs(Number(o.avgPrice) - Number(booked.exit_price)) < 1e-9)
        assert.ok(child, `the exit at ${booked.exit_price} is one of the children ${children.map((c) => c.avgPrice).join(', ')}`)
        assert.equal(child!.origType, { stop: 'STOP_MARKET', take: 'TAKE_PROFIT_MARKET', trail: 'TRAILING_STOP_MARKET' }[name])
        // Once: each child that filled has exactly one exit order of ours, whichever way it was heard.
        await poll('every child booked exactly once', 30_000, paced(async () => {
          const fills = await protectiveFills(name, letter)
          const rows = await exitOrders(id, REASON[name])
          const booked = rows.map((r) => r.client_order_id).sort()
          return JSON.stringify(booked) === JSON.stringify(fills.map((o) => o.clientOrderId).sort()) ? true : undefined
        }))
        // The ledger equals the exchange's fills, and the run still trades.
        const picture = await quietPicture(a, id)
        assert.equal(picture.ledgerQty, picture.exchangeQty)
        assert.deepEqual(
          picture.booked.filter((x) => x.startsWith('pp-')),
          picture.sent,
          "the run's own orders: booked as sent (its exits carry the children's pa- ids)",
        )
        const events = await db().selectFrom('events').select('data').where('type', '=', 'strategy.position_closed').execute()
        assert.ok(events.some((e) => (e.data as { strategy_id: string; exit_reason: string }).strategy_id === id && (e.data as { exit_reason: string }).exit_reason === REASON[name]))
        const ids = (await algoHistory(a)).map((o) => o.clientAlgoId)
        assert.ok(ids.length > 0 && ids.every((x) => protectiveKindOf(clientAlgoIdPrefix(id), x) !== undefined))
        assert.equal(new Set(ids).size, ids.length, 'no clientAlgoId used twice')
        assert.equal((await harness.call('GET', `/v1/strategies/${id}`)).json().status, 'deployed')
      })
    }

    it('a stop the exchange rejects at its trigger is an alarm: last_error, strategy.error, and the position closed at market as a stop_loss', async () => {
      const id = strategies.rejected!
      const alarm = await poll('the protection alarm', 120_000, async () => {
        const error = await harness.errorOf(id)
        return error?.code === PROTECTION_LOST ? error : undefined
      })
      assert.match(alarm.message, /rejected .* when it triggered .*closed at market/)
      const history = await algoHistory(ACCOUNTS.rejected)
      assert.ok(history.some((o) => o.algoStatus === 'REJECTED'))
      // The close is a plain reduce-only MARKET order under a protective id of the stop's kind, booked as a stop_loss.
      const [close] = await poll('the alarm close filled', 30_000, paced(async () => {
        const fills = (await protectiveFills('rejected', 's')).filter((o) => o.origType === 'MARKET')
        return fills.length > 0 ? fills : undefined
      }))
      assert.equal(close!.reduceOnly, true)
      const booked = await poll('the close booked as a stop_loss', 30_000, async () => (await trades(id)).find((r) => r.exit_reason === 'stop_loss'))
      assert.ok(booked)
      const strategy = (await harness.call('GET', `/v1/strategies/${id}`)).json()
      assert.equal(strategy.status, 'deployed', 'an alarm, not the error move')
      assert.equal(strategy.last_error.code, PROTECTION_LOST)
      const picture = await quietPicture(ACCOUNTS.rejected, id)
      assert.equal(picture.ledgerQty, picture.exchangeQty)
    })

    it("a user-stream reconnect's reconciliation places again a stop cancelled behind the run's back", async () => {
      const id = strategies.stop!
      const a = ACCOUNTS.stop
      // The stop run hears no ALGO_UPDATE: only the reconciliation can see the cancel.
      const resting = await poll('a resting stop', 120_000, paced(async () => {
        const open = await exchange(a).algo.open('BTCUSDT')
        return open.kind === 'ok' ? open.value.find((o) => o.orderType === 'STOP_MARKET') : undefined
      }))
      assert.equal((await exchange(a).algo.cancel({ clientAlgoId: resting.clientAlgoId })).kind, 'ok')
      t.replay!.faults.closeUserStreams(a.apiKey)
      const again = await poll('the stop placed again', 30_000, paced(async () => {
        const open = await exchange(a).algo.open('BTCUSDT')
        const stop = open.kind === 'ok' ? open.value.find((o) => o.orderType === 'STOP_MARKET') : undefined
        if (stop) return stop
        // Flat meanwhile (a stop fired or the template closed): nothing needs a stop.
        return (await harness.exchangeQty(a)) === 0 ? null : undefined
      }))
      if (again) assert.notEqual(again.clientAlgoId, resting.clientAlgoId, 'a fresh id, never the cancelled one')
      const row = await db().selectFrom('protective_orders').selectAll().where('client_algo_id', '=', resting.clientAlgoId).executeTakeFirstOrThrow()
      assert.equal(row.status, 'canceled')
    })

    it('a pause keeps the protective orders of a position it leaves open; a pause with close_positions cancels them, then closes', async () => {
      const protectedPosition = (name: Name) =>
        poll(`a protected position of the ${name} run`, 120_000, paced(async () => {
          const open = await exchange(ACCOUNTS[name]).algo.open('BTCUSDT')
          const held = await harness.exchangeQty(ACCOUNTS[name])
          return open.kind === 'ok' && open.value.length > 0 && held !== 0 ? open.value : undefined
        }))
      await protectedPosition('take')
      const kept = await harness.call('POST', `/v1/strategies/${strategies.take}/pause`, {})
      assert.equal(kept.statusCode, 200, kept.body)
      const held = await harness.exchangeQty(ACCOUNTS.take)
      const open = await exchange(ACCOUNTS.take).algo.open('BTCUSDT')
      assert.equal(open.kind, 'ok')
      const rows = await db().selectFrom('protective_orders').selectAll().where('strategy_id', '=', strategies.take!).where('status', '=', 'open').execute()
      if (held !== 0) {
        assert.ok(open.kind === 'ok' && open.value.length > 0, 'the position left open is still protected on the exchange')
        assert.deepEqual(open.kind === 'ok' ? open.value.map((o) => o.clientAlgoId).sort() : [], rows.map((r) => r.client_algo_id).sort())
      }

      await protectedPosition('trail')
      const closed = await harness.call('POST', `/v1/strategies/${strategies.trail}/pause`, { close_positions: true })
      assert.equal(closed.statusCode, 200, closed.body)
      assert.equal(await harness.exchangeQty(ACCOUNTS.trail), 0)
      const left = await exchange(ACCOUNTS.trail).algo.open('BTCUSDT')
      assert.deepEqual(left.kind === 'ok' ? left.value : undefined, [], 'nothing of the run rests on the exchange')
      const active = await db().selectFrom('protective_orders').select('status').where('strategy_id', '=', strategies.trail!).where('status', 'in', ['intent', 'open', 'unknown']).execute()
      assert.deepEqual(active, [])
    })
  })
}
