import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { metrics } from '../../src/ops/registry.js'
import { type SignedInUser, signIn } from '../auth/bearer.js'
import { account, liveHarness } from './live-accounts.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { type HttpsReceiver, startHttpsReceiver, testCertificates, verifyStandardWebhook } from '../support/https-receiver.js'
import { poll } from '../support/poll.js'
import WebSocket from 'ws'

// 1m bars close every two wall seconds from 2025-06-17 06:00 UTC (inside the recorded minutes).
const SPEED = 30
const REPLAY_START = Date.UTC(2025, 5, 17, 6, 0, 0)
const ACCOUNTS = { liq: account('LIQ'), adl: account('ADL') }
/** perpetua_run_exchange_closes_total{reason} in this process, whose runners are the test's. */
const closesCounted = async (reason: string) => (await metrics.exchangeCloses.get()).values.find((v) => v.labels.reason === reason)?.value ?? 0

for (const backend of backends()) {
  describe(`exchange-side closes of live runs (${backend})`, () => {
    let t: TestApp
    let pool: RunnerPool
    let successor: RunnerPool | undefined
    let user: SignedInUser
    let receiver: HttpsReceiver
    let hookSecret: string
    /** Every strategy stream message, per strategy (opened once each run is deployed). */
    const streamed: Record<string, { type: string; data: Record<string, unknown> }[]> = {}
    const sockets: WebSocket[] = []
    const keyIds: Record<string, string> = {}
    const strategies: Record<string, string> = {}
    const { db, exchange, exchangeQty, exchangeNow, runState, create, deploy, registerKey, errorOf, call } = liveHarness(
      () => t,
      () => user,
    )
    const trades = (id: string) => db().selectFrom('strategy_trades').selectAll().where('strategy_id', '=', id).orderBy('id').execute()
    const closedEvents = async (id: string) =>
      (await db().selectFrom('events').selectAll().where('type', '=', 'strategy.position_closed').execute())
        .map((e) => e.data as { strategy_id: string; exit_reason: string; exit_price: string; pnl: string })
        .filter((d) => d.strategy_id === id)
    /** position_closed webhooks delivered for one strategy, each checked for its signature. */
    const hooked = (id: string) =>
      receiver.received
        .filter((r) => {
          assert.equal(verifyStandardWebhook(hookSecret, r.headers, r.body, 300, t.clock.now()), true)
          return true
        })
        .map((r) => JSON.parse(r.body) as { type: string; data: { strategy_id: string; exit_reason: string; exit_price: string } })
        .filter((e) => e.type === 'strategy.position_closed' && e.data.strategy_id === id)

    /**
     * Makes the exchange close the run's position itself once the run holds one, just after the run acted on a
     * bar (a bar takes a wall second here): an exchange close racing the run's own order is not what this tests.
     * Answers the exchange's order and the position it closed.
     */
    const closeByExchange = (name: keyof typeof ACCOUNTS, kind: 'liquidation' | 'adl') => {
      let seen: number | null | undefined
      return poll(`a ${kind} of the ${name} run's position`, 60_000, async () => {
        const state = await runState(strategies[name]!)
        const last = state?.broker.lastOpenTime
        const fresh = seen !== undefined && last !== seen
        seen = last
        if (!fresh) return undefined
        const held = await exchangeQty(ACCOUNTS[name])
        if (!state || state.pendingOrder !== null || held === 0 || held !== state.broker.ledger.arrays.qty[0]) return undefined
        // Early in the bar (a wall second before the next close, on a loaded machine too), so the run sends nothing meanwhile.
        if ((await exchangeNow()) % 60_000 >= 30_000) return undefined
        try {
          return { order: t.replay!.accounts.liquidate(ACCOUNTS[name].apiKey, { symbol: 'BTCUSDT', kind }), held }
        } catch {
          return undefined // the run closed its position meanwhile: try at its next one
        }
      })
    }

    before(async () => {
      receiver = await startHttpsReceiver()
      t = await startTestApp(
        backend,
        { WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: testCertificates().caFile, RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000' },
        {
          replay: { speed: SPEED, replayStart: REPLAY_START, accounts: Object.values(ACCOUNTS).map((a) => ({ ...a, balances: { USDT: '10000' } })) },
          queue: 'workers',
          config: { webhookTimeoutMs: 1000 },
        },
      )
      await t.app.listen({ host: '127.0.0.1', port: 0 })
      user = await signIn(t)
      const hook = await call('POST', '/v1/webhooks', { url: `${receiver.url}/closes`, events: ['strategy.position_closed'] })
      assert.equal(hook.statusCode, 200, hook.body)
      hookSecret = hook.json().secret as string
      for (const [name, a] of Object.entries(ACCOUNTS)) keyIds[name] = await registerKey(name, a)
      pool = new RunnerPool({ db: db(), market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals, secrets: t.services.secrets })
      pool.start()
      for (const name of Object.keys(ACCOUNTS)) strategies[name] = await create(name)
      for (const name of Object.keys(ACCOUNTS)) await deploy(strategies[name]!, keyIds[name]!)
      const port = (t.app.server.address() as { port: number }).port
      for (const id of Object.values(strategies)) {
        const ticket = await call('POST', `/v1/strategies/${id}/stream-ticket`, {})
        assert.equal(ticket.statusCode, 200, ticket.body)
        const socket = new WebSocket(`ws://127.0.0.1:${port}/v1/strategies/${id}/stream?ticket=${encodeURIComponent(ticket.json().ticket)}`)
        streamed[id] = []
        socket.on('message', (data) => streamed[id]!.push(JSON.parse(String(data))))
        await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject))
        sockets.push(socket)
      }
    })
    after(async () => {
      for (const socket of sockets) socket.close()
      await pool.stop()
      await successor?.stop()
      await t.close()
      await receiver.close()
    })

    it("books a liquidation as the run's closing trade at the exchange's price and fee, once, and the run carries on", async () => {
      const id = strategies.liq!
      const countedBefore = await closesCounted('liquidation')
      const { order, held } = await closeByExchange('liq', 'liquidation')
      assert.match(String(order.clientOrderId), /^autoclose-\d+$/)
      const booked = await poll('the liquidation booked as a trade', 30_000, async () => (await trades(id)).find((r) => r.exit_reason === 'liquidation'))
      // The exchange's own fill: its price and its commission.
      const fills = await exchange(ACCOUNTS.liq).userTrades('BTCUSDT', { orderId: order.orderId as number })
      assert.equal(fills.kind, 'ok')
      const fill = fills.kind === 'ok' ? fills.value[0]! : undefined
      assert.ok(fill && Number(fill.commission) > 0, 'a liquidation is charged the taker fee')
      assert.equal(Number(booked.exit_price), Number(fill!.price))
      assert.equal(Number(booked.qty), Math.abs(held))
      assert.equal(booked.side, held > 0 ? 'buy' : 'sell')
      // The trade's fee is its entry fills' (our orders', as the exchange charged them at the taker rate) plus the exchange's liquidation commission.
      const entryFee = Math.abs(held) * Number(booked.entry_price) * 0.0005
      assert.ok(Math.abs(Number(booked.fee) - (entryFee + Number(fill!.commission))) < 1e-6, `fee ${booked.fee} = entry ${entryFee} + ${fill!.commission}`)
      const pnlSide = held > 0 ? 1 : -1
      const expectedPnl = pnlSide * Math.abs(held) * (Number(booked.exit_price) - Number(booked.entry_price)) - Number(booked.fee) - Number(booked.funding)
      assert.ok(Math.abs(Number(booked.pnl) - expectedPnl) < 1e-6)
      // position_closed went out (outbox for webhooks, the same rows feed the stream) with the reason.
      const events = await poll('the position_closed event', 10_000, async () => (await closedEvents(id)).find((e) => e.exit_reason === 'liquidation'))
      assert.equal(Number(events.exit_price), Number(fill!.price))
      const message = await poll('the position_closed stream message', 10_000, async () => streamed[id]!.find((m) => m.type === 'position_closed' && m.data.exit_reason === 'liquidation'))
      assert.equal(Number(message.data.exit_price), Number(fill!.price))
      const delivered = await poll('the position_closed webhook', 15_000, async () => hooked(id).find((e) => e.data.exit_reason === 'liquidation'))
      assert.equal(Number(delivered.data.exit_price), Number(fill!.price))
      // Not a mismatch: the run keeps running, flat, with the ledger equal to the exchange.
      assert.equal(await errorOf(id), undefined)
      assert.equal((await call('GET', `/v1/strategies/${id}`)).json().status, 'deployed')

      // Once: a new node taking the run over reads the fills again (userTrades) and books nothing twice.
      await pool.stop()
      successor = new RunnerPool({ db: db(), market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals, secrets: t.services.secrets })
      successor.start()
      const after = booked.exit_time.getTime()
      // As a backtest after a liquidation: the next target opens a position again.
      await poll('the run to trade again after the liquidation', 60_000, async () => {
        const orders = await db().selectFrom('strategy_orders').selectAll().where('strategy_id', '=', id).where('status', '=', 'filled').execute()
        return orders.some((o) => o.filled_at !== null && o.filled_at.getTime() > after && Number(o.qty) > 0) ? true : undefined
      })
      const liquidations = (await trades(id)).filter((r) => r.exit_reason === 'liquidation')
      assert.equal(liquidations.length, 1, 'booked once')
      assert.equal((await closesCounted('liquidation')) - countedBefore, 1, 'counted once')
      assert.equal((await closedEvents(id)).filter((e) => e.exit_reason === 'liquidation').length, 1)
      assert.equal(hooked(id).filter((e) => e.data.exit_reason === 'liquidation').length, 1, 'one webhook')
      assert.equal(await errorOf(id), undefined)
      const state = (await runState(id)) as unknown as { exchangeFills: string[] }
      assert.ok(state.exchangeFills.includes(`${order.orderId}:${fill!.id}`), 'the fill is remembered by the exchange order id')
    })

    it('books an auto-deleverage (adl_autoclose) with exit_reason adl and no fee of its own', async () => {
      const id = strategies.adl!
      const { order, held } = await closeByExchange('adl', 'adl')
      assert.equal(order.clientOrderId, 'adl_autoclose')
      const booked = await poll('the ADL booked as a trade', 30_000, async () => (await trades(id)).find((r) => r.exit_reason === 'adl'))
      assert.equal(Number(booked.exit_price), Number(order.avgPrice), 'the exchange fill price')
      assert.equal(Number(booked.qty), Math.abs(held))
      const entryFee = Math.abs(held) * Number(booked.entry_price) * 0.0005
      assert.ok(Math.abs(Number(booked.fee) - entryFee) < 1e-6, `only the entry's fee: ${booked.fee} against ${entryFee}`)
      await poll('the adl position_closed event', 10_000, async () => (await closedEvents(id)).find((e) => e.exit_reason === 'adl'))
      await poll('the adl stream message', 10_000, async () => streamed[id]!.find((m) => m.type === 'position_closed' && m.data.exit_reason === 'adl'))
      await poll('the adl webhook', 15_000, async () => hooked(id).find((e) => e.data.exit_reason === 'adl'))
      assert.equal(await errorOf(id), undefined)
      assert.equal((await call('GET', `/v1/strategies/${id}`)).json().status, 'deployed')
    })

    it('the control refuses what it cannot do, naming the problem', async () => {
      const res = await fetch(`${t.replay!.url}/__replay/accounts/nobody/liquidate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ symbol: 'BTCUSDT' }) })
      assert.equal(res.status, 404)
      const flat = account('FLAT')
      t.replay!.accounts.create({ ...flat })
      const none = await fetch(`${t.replay!.url}/__replay/accounts/${flat.apiKey}/liquidate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ symbol: 'BTCUSDT', kind: 'adl' }) })
      assert.equal(none.status, 400)
      assert.match(((await none.json()) as { error: string }).error, /holds no BTCUSDT position/)
      const kind = await fetch(`${t.replay!.url}/__replay/accounts/${flat.apiKey}/liquidate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ symbol: 'BTCUSDT', kind: 'margin-call' }) })
      assert.equal(kind.status, 400)
      assert.match(((await kind.json()) as { error: string }).error, /kind must be liquidation or adl/)
    })
  })
}
