import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { Ledger } from '../../../src/engine/ledger.js'
import type { ExitRules } from '../../../src/engine/types.js'
import { clientAlgoIdPrefix, protectiveKindOf } from '../../../src/live/protection/client-algo-ids.js'
import { desiredOrders } from '../../../src/live/protection/desired-orders.js'
import { ProtectiveOrders } from '../../../src/live/protection/protective-orders.js'
import { activeProtective } from '../../../src/live/protection/queries.js'
import type { BinanceAlgoOrder } from '../../../src/trading/binance/algo-orders.js'
import { type SignedInUser, signIn } from '../../auth/bearer.js'
import { BTCUSDT_RULES } from '../../engine/helpers.js'
import { startTestApp, type TestApp } from '../../support/app.js'
import { backends } from '../../support/database.js'
import { poll } from '../../support/poll.js'
import { account, hex, liveHarness } from '../live-accounts.js'

const SPEED = 30
const REPLAY_START = Date.UTC(2025, 5, 17, 6, 0, 0)
const OWNER = 'protection-test'
const RULES: ExitRules = { stopLoss: 0.02, takeProfit: 0.04, trailingStop: 0.013, trailingActivation: 0.01, trigger: 'mark' }

for (const backend of backends()) {
  describe(`a live run's protective orders on the replay exchange (${backend})`, () => {
    let t: TestApp
    let user: SignedInUser
    const a = account('PROT')
    const harness = liveHarness(
      () => t,
      () => user,
    )
    const { db, exchange, exchangeQty } = harness
    let strategyId: string
    let orders: ProtectiveOrders
    let run: number
    /** The run's ledger as the engine keeps it: its levels are what the run places. */
    const ledger = new Ledger(['BTCUSDT'], [BTCUSDT_RULES], 1000, 2, 0.0005)
    ledger.protect(RULES)

    const open = async () => {
      const answer = await exchange(a).algo.open('BTCUSDT')
      assert.equal(answer.kind, 'ok')
      return answer.kind === 'ok' ? answer.value.sort((x, y) => x.orderType.localeCompare(y.orderType)) : []
    }
    const all = async (): Promise<BinanceAlgoOrder[]> => {
      const answer = await exchange(a).algo.all('BTCUSDT', { startTime: REPLAY_START - 3_600_000, limit: 1000 })
      assert.equal(answer.kind, 'ok')
      return answer.kind === 'ok' ? answer.value : []
    }
    /** Moves the account's position (a plain MARKET order) and the ledger with it, at the exchange's fill. */
    let n = 0
    const trade = async (side: 'BUY' | 'SELL', qty: string) => {
      const placed = await exchange(a).placeOrder({ symbol: 'BTCUSDT', side, type: 'MARKET', quantity: qty, clientOrderId: `test-${n++}` })
      assert.equal(placed.kind, 'ok', JSON.stringify(placed))
      const fill = placed.kind === 'ok' ? placed.value : undefined
      ledger.moveTo(0, await exchangeQty(a), Number(fill!.avgPrice), fill!.updateTime)
    }
    const sync = async () => orders.sync(desiredOrders(ledger.qty[0]!, ledger.exits, 0, BTCUSDT_RULES))

    before(async () => {
      t = await startTestApp(backend, { RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000' }, { replay: { speed: SPEED, replayStart: REPLAY_START, accounts: [{ ...a, balances: { USDT: '10000' } }] } })
      user = await signIn(t)
      const keyId = await harness.registerKey('prot', a)
      strategyId = await harness.create('protected', 'BTCUSDT', { exits: { stop_loss: '0.02' } })
      await harness.deploy(strategyId, keyId)
      // No runner pool here: this test holds the run's lease itself, as a runner would.
      await db().updateTable('strategy_runs').set({ lease_owner: OWNER, lease_expires_at: new Date(Date.now() + 3_600_000) }).where('strategy_id', '=', strategyId).execute()
      const rows = await db().selectFrom('strategy_runs').select('run').where('strategy_id', '=', strategyId).execute()
      run = rows[0]!.run
      orders = new ProtectiveOrders(exchange(a), { db: db(), owner: OWNER, strategyId, run, symbol: 'BTCUSDT', rules: BTCUSDT_RULES, now: Date.now })
    })
    after(async () => {
      await t.close()
    })

    it('on open: a close-all STOP_MARKET and TAKE_PROFIT_MARKET at the engine levels and a reduce-only trailing stop, with priceProtect, the trigger as workingType and pa- ids', async () => {
      await trade('BUY', '0.010')
      const result = await sync()
      assert.deepEqual(result, { settled: true, problems: [] })
      const [stop, take, trail] = [...(await open())].sort((x, y) => ['STOP_MARKET', 'TAKE_PROFIT_MARKET', 'TRAILING_STOP_MARKET'].indexOf(x.orderType) - ['STOP_MARKET', 'TAKE_PROFIT_MARKET', 'TRAILING_STOP_MARKET'].indexOf(y.orderType))
      const x = ledger.exits!
      assert.equal(stop!.orderType, 'STOP_MARKET')
      assert.equal(Number(stop!.triggerPrice), x.exitStop[0], 'the engine level, on the tick grid below the long')
      // Levels are on the tick grid (0.1) with a float tolerance of 1e-9 ticks: entry × 0.98 or × 1.04 that falls on
      // the grid (one fill price in 25) is that tick, which can sit 1e-10 beyond the product's float noise.
      const ON_GRID = 1e-6
      assert.ok(Number(stop!.triggerPrice) <= ledger.entryPrice[0]! * 0.98 + ON_GRID)
      assert.equal(stop!.closePosition, true)
      assert.equal(stop!.priceProtect, true)
      assert.equal(stop!.side, 'SELL')
      assert.equal(stop!.workingType, 'MARK_PRICE')
      assert.equal(take!.orderType, 'TAKE_PROFIT_MARKET')
      assert.equal(Number(take!.triggerPrice), x.exitTake[0])
      assert.ok(Number(take!.triggerPrice) >= ledger.entryPrice[0]! * 1.04 - ON_GRID, `${take!.triggerPrice} from entry ${ledger.entryPrice[0]}`)
      assert.equal(take!.closePosition, true)
      assert.equal(trail!.orderType, 'TRAILING_STOP_MARKET')
      assert.equal(Number(trail!.quantity), 0.01)
      assert.equal(trail!.reduceOnly, true)
      assert.equal(trail!.closePosition, false)
      assert.equal(Number(trail!.callbackRate), 1.3)
      assert.equal(Number(trail!.activatePrice), x.exitActivation[0], 'trailing waits for its activation price')
      const prefix = clientAlgoIdPrefix(strategyId)
      assert.equal(prefix, `pa-${hex(strategyId)}-`)
      assert.deepEqual([stop, take, trail].map((o) => protectiveKindOf(prefix, o!.clientAlgoId)), ['stop_loss', 'take_profit', 'trailing_stop'])
      for (const o of [stop, take, trail]) assert.ok(o!.clientAlgoId.length <= 36 && /^[.A-Z:/a-z0-9_-]{1,36}$/.test(o!.clientAlgoId))
      const rows = await activeProtective(db(), strategyId, 'BTCUSDT')
      assert.deepEqual(rows.map((r) => [r.client_algo_id, r.status, Number(r.algo_id)]).sort(), [stop, take, trail].map((o) => [o!.clientAlgoId, 'open', o!.algoId]).sort())
      // A second sync with nothing changed sends nothing.
      const before = (await all()).length
      assert.deepEqual(await sync(), { settled: true, problems: [] })
      assert.equal((await all()).length, before)
    })

    it('a shrink resizes only the trailing stop; a grow moves every level (cancel, then place); the gap is measured', async (ctx) => {
      const first = await open()
      await trade('SELL', '0.004')
      await sync()
      const shrunk = await open()
      const kept = (type: string, list: BinanceAlgoOrder[]) => list.find((o) => o.orderType === type)!.clientAlgoId
      assert.equal(kept('STOP_MARKET', shrunk), kept('STOP_MARKET', first), 'same entry price: the close-all stop stays')
      assert.equal(kept('TAKE_PROFIT_MARKET', shrunk), kept('TAKE_PROFIT_MARKET', first))
      assert.notEqual(kept('TRAILING_STOP_MARKET', shrunk), kept('TRAILING_STOP_MARKET', first))
      assert.equal(Number(shrunk.find((o) => o.orderType === 'TRAILING_STOP_MARKET')!.quantity), 0.006)

      // Growing at another price moves the average entry, so every level moves.
      const entryBefore = ledger.entryPrice[0]!
      await trade('BUY', '0.002')
      await poll('a grow at another price', 30_000, async () => {
        await new Promise((resolve) => setTimeout(resolve, 500))
        await trade('BUY', '0.002')
        return ledger.entryPrice[0] !== entryBefore ? true : undefined
      })
      await sync()
      const grown = await open()
      assert.equal(grown.length, 3)
      assert.equal(Number(grown.find((o) => o.orderType === 'STOP_MARKET')!.triggerPrice), ledger.exits!.exitStop[0])
      assert.notEqual(kept('STOP_MARKET', grown), kept('STOP_MARKET', shrunk))
      // The unprotected gap of a move: the old stop's cancel to the new one's acceptance, in exchange time (÷ SPEED: wall ms).
      const history = await all()
      const old = history.find((o) => o.clientAlgoId === kept('STOP_MARKET', shrunk))!
      const fresh = history.find((o) => o.clientAlgoId === kept('STOP_MARKET', grown))!
      assert.equal(old.algoStatus, 'CANCELED')
      assert.ok(fresh.createTime >= old.updateTime, 'cancel, then place: never two close-all stops at once (-4130)')
      ctx.diagnostic(`stop moved: unprotected for ${(fresh.createTime - old.updateTime) / SPEED} ms wall (${fresh.createTime - old.updateTime} ms of replay time at ${SPEED}x)`)
    })

    it('a reversal flips every order to the other side; flat cancels them all', async () => {
      await trade('SELL', String((Math.abs(ledger.qty[0]!) + 0.005).toFixed(3)))
      assert.ok(ledger.qty[0]! < 0)
      await sync()
      const flipped = await open()
      assert.equal(flipped.length, 3)
      assert.ok(flipped.every((o) => o.side === 'BUY'))
      assert.equal(Number(flipped.find((o) => o.orderType === 'STOP_MARKET')!.triggerPrice), ledger.exits!.exitStop[0])
      assert.ok(ledger.exits!.exitStop[0]! >= ledger.entryPrice[0]! * 1.02, "a short's stop above its entry")
      await trade('BUY', String(Math.abs(ledger.qty[0]!).toFixed(3)))
      assert.equal(ledger.qty[0], 0)
      assert.deepEqual(await sync(), { settled: true, problems: [] })
      assert.deepEqual(await open(), [])
      assert.deepEqual(await activeProtective(db(), strategyId, 'BTCUSDT'), [])
    })

    it('an acknowledged placement the query endpoints do not know yet (algo unknown) is not placed twice; a reconciliation adopts it once listed', async () => {
      t.replay!.faults.add({ path: '/fapi/v1/algoOrder', algo: 'unknown', latencyMs: 3_000, times: 3, account: a.apiKey })
      await trade('SELL', '0.005')
      assert.equal((await sync()).settled, true)
      const placed = (await all()).length
      // Every later sync and reconciliation while the exchange "forgets" them: nothing placed again.
      assert.equal(await orders.check(), true)
      await sync()
      await sync()
      assert.equal((await all()).length, placed)
      assert.equal((await open()).length, 0, 'still hidden from the query endpoints')
      assert.equal((await activeProtective(db(), strategyId, 'BTCUSDT')).length, 3, 'the rows still hold them')
      const listed = await poll('the hidden orders listed', 30_000, async () => ((await open()).length === 3 ? await open() : undefined))
      assert.equal(await orders.check(), true)
      assert.deepEqual((await activeProtective(db(), strategyId, 'BTCUSDT')).map((r) => r.client_algo_id).sort(), listed.map((o) => o.clientAlgoId).sort())
      await trade('BUY', '0.005')
      await sync()
    })

    it('a reconciliation cancels a stray order of ours, re-places one cancelled behind the run, and refuses a foreign one; no clientAlgoId is ever sent twice', async () => {
      await trade('BUY', '0.003')
      await sync()
      const resting = await open()
      const stop = resting.find((o) => o.orderType === 'STOP_MARKET')!
      // Cancelled behind the run's back: the reconciliation finds it cancelled and the next sync places it again.
      assert.equal((await exchange(a).algo.cancel({ clientAlgoId: stop.clientAlgoId })).kind, 'ok')
      // A stray of ours no row holds (an earlier run's, say): cancelled.
      const stray = `${clientAlgoIdPrefix(strategyId)}s999999`
      const placed = await exchange(a).algo.place({ symbol: 'BTCUSDT', side: 'SELL', type: 'STOP_MARKET', triggerPrice: String(Math.round(ledger.entryPrice[0]! * 0.5)), quantity: '0.001', reduceOnly: true, workingType: 'CONTRACT_PRICE', clientAlgoId: stray })
      assert.equal(placed.kind, 'ok', JSON.stringify(placed))
      assert.equal(await orders.check(), true)
      await sync()
      const after = await open()
      assert.equal(after.length, 3)
      assert.ok(!after.some((o) => o.clientAlgoId === stray || o.clientAlgoId === stop.clientAlgoId))
      assert.equal(Number(after.find((o) => o.orderType === 'STOP_MARKET')!.triggerPrice), Number(stop.triggerPrice))
      // Someone else's conditional order on the symbol: the run cannot explain what it would do.
      const foreign = await exchange(a).algo.place({ symbol: 'BTCUSDT', side: 'SELL', type: 'STOP_MARKET', triggerPrice: String(Math.round(ledger.entryPrice[0]! * 0.5)), quantity: '0.001', reduceOnly: true, workingType: 'CONTRACT_PRICE', clientAlgoId: 'someone-else-1' })
      assert.equal(foreign.kind, 'ok')
      await assert.rejects(orders.check(), (e: Error & { code?: string }) => e.code === 'FOREIGN_ORDER')
      await exchange(a).algo.cancel({ clientAlgoId: 'someone-else-1' })
      const ids = (await all()).map((o) => o.clientAlgoId).filter((id) => id !== 'someone-else-1')
      assert.equal(new Set(ids).size, ids.length, 'no clientAlgoId used twice')
    })

    it('after a takeover, an unknown placement found nowhere is replaced under a new id at once; one that arrived unseen is adopted after -4130 (close-all) or its extra cancelled (trailing): one order per kind, no id sent twice', async () => {
      const rowsOf = () => db().selectFrom('protective_orders').selectAll().where('strategy_id', '=', strategyId).orderBy('seq').execute()
      const kindOf = (o: BinanceAlgoOrder) => protectiveKindOf(clientAlgoIdPrefix(strategyId), o.clientAlgoId)
      /** A new owner of the run's protection (a takeover): it knows only the rows. */
      const takeOver = () => new ProtectiveOrders(exchange(a), { db: db(), owner: OWNER, strategyId, run, symbol: 'BTCUSDT', rules: BTCUSDT_RULES, now: Date.now })
      const onePerKind = async () => {
        const resting = await open()
        assert.deepEqual(resting.map(kindOf).sort(), ['stop_loss', 'take_profit', 'trailing_stop'])
        assert.equal(Number(resting.find((o) => o.orderType === 'STOP_MARKET')!.triggerPrice), ledger.exits!.exitStop[0])
        assert.deepEqual((await rowsOf()).filter((r) => r.status === 'open').map((r) => r.client_algo_id).sort(), resting.map((o) => o.clientAlgoId).sort())
      }
      await trade(ledger.qty[0]! > 0 ? 'SELL' : 'BUY', Math.abs(ledger.qty[0]!).toFixed(3))
      assert.deepEqual(await sync(), { settled: true, problems: [] })

      // 1. Lost before the exchange (the connection dropped after sending): the stop is unknown, and the next owner,
      //    finding it nowhere, places it under a new id at once rather than leave the position without a stop.
      t.replay!.faults.add({ path: '/fapi/v1/algoOrder', drop: true, times: 1, account: a.apiKey })
      await trade('BUY', '0.010')
      assert.equal((await sync()).settled, false)
      const lost = (await rowsOf()).find((r) => r.kind === 'stop_loss' && r.status === 'unknown')
      assert.ok(lost, 'the dropped stop placement is unknown')
      orders = takeOver()
      assert.equal(await orders.check(), true)
      await orders.sync(desiredOrders(ledger.qty[0]!, ledger.exits, 0, BTCUSDT_RULES))
      await onePerKind()
      assert.ok(!(await all()).some((o) => o.clientAlgoId === lost.client_algo_id), 'the lost one never reached the exchange')

      // 2. Placed, its answer lost (503) and unseen by the query endpoints for a while (algo unknown): the new owner's
      //    replacement is refused (-4130: a close-all stop of that side rests), so it waits for the one resting and adopts it.
      await trade('SELL', '0.010')
      await sync()
      t.replay!.faults.add({ path: '/fapi/v1/algoOrder', algo: 'unknown', latencyMs: 8_000, times: 1, account: a.apiKey })
      t.replay!.faults.add({ path: '/fapi/v1/algoOrder', executeThen: 503, times: 1, account: a.apiKey })
      await trade('BUY', '0.010')
      assert.equal((await sync()).settled, false)
      const unseen = (await rowsOf()).find((r) => r.kind === 'stop_loss' && r.status === 'unknown' && r.seq > lost.seq)!
      assert.ok(unseen, 'the stop whose answer was lost is unknown')
      orders = takeOver()
      assert.equal((await sync()).settled, false)
      const refused = (await rowsOf()).filter((r) => r.kind === 'stop_loss' && r.seq > unseen.seq)
      assert.equal(refused.length, 1)
      assert.equal(refused[0]!.status, 'rejected')
      assert.match(refused[0]!.last_error ?? '', /^-4130 /)
      const intents = (await rowsOf()).length
      assert.equal((await sync()).settled, false, 'still unseen: waited for, not replaced again')
      assert.equal((await rowsOf()).length, intents)
      await poll('the unseen stop listed', 30_000, async () => ((await open()).length === 3 ? true : undefined))
      assert.deepEqual(await sync(), { settled: true, problems: [] })
      await onePerKind()
      assert.equal((await rowsOf()).find((r) => r.client_algo_id === unseen.client_algo_id)!.status, 'open', 'adopted')

      // 3. The same for the trailing stop (reduce-only: a second may rest): replaced at once, and the extra cancelled once the first shows.
      t.replay!.faults.add({ path: '/fapi/v1/algoOrder', algo: 'unknown', latencyMs: 8_000, times: 1, account: a.apiKey })
      t.replay!.faults.add({ path: '/fapi/v1/algoOrder', executeThen: 503, times: 1, account: a.apiKey })
      await trade('SELL', '0.004')
      assert.equal((await sync()).settled, false)
      orders = takeOver()
      assert.equal((await sync()).settled, false, 'the unknown trailing stop is still looked up')
      await onePerKind()
      await poll('the unseen trailing stop listed beside its replacement', 30_000, async () => ((await open()).length === 4 ? true : undefined))
      assert.deepEqual(await sync(), { settled: true, problems: [] })
      await onePerKind()
      assert.equal(Number((await open()).find((o) => o.orderType === 'TRAILING_STOP_MARKET')!.quantity), 0.006)

      const ids = (await all()).map((o) => o.clientAlgoId)
      assert.equal(new Set(ids).size, ids.length, 'no clientAlgoId sent twice')
      await trade('SELL', '0.006')
      await sync()
    })
  })
}

