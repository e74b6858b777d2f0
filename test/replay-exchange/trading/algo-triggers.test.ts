import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { after, before, describe, it } from 'node:test'
import { tempDir } from '../../support/database.js'
import { FUTURES_DIR, MINUTE } from '../support.js'
import { algo, btcMinutes, dropLevel, open, positionAmt, riseLevel, tick } from './algo-support.js'
import { openUserStream, poll, startTradingExchange, type TradingExchange } from './support.js'

const algoEvents = (events: any[], algoId: number) => events.filter((e) => e.e === 'ALGO_UPDATE' && e.o.aid === algoId).map((e) => e.o.X)

describe('replay exchange trading: algo triggers, event orders and faults', () => {
  let t: TradingExchange
  before(async () => {
    t = await startTradingExchange()
  })
  after(() => t.close())

  it('a trailing stop without activatePrice follows the highest price since placement and fires callbackRate below it', async () => {
    const keys = await t.account()
    await open(t, keys, 0.01)
    const now = await t.replayNow()
    const placed = await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'TRAILING_STOP_MARKET', callbackRate: '0.2', quantity: '0.010', reduceOnly: 'true' }))
    assert.equal(placed.status, 200, JSON.stringify(placed.body))
    assert.equal(placed.body.callbackRate, '0.2')
    assert.ok(Number(placed.body.activatePrice) > 0, 'activation defaults to the latest price')
    t.clock.advance(120 * MINUTE)
    const done = (await t.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: placed.body.algoId })).body
    assert.equal(done.algoStatus, 'FINISHED', JSON.stringify(done))
    assert.equal(await positionAmt(t, keys), 0)
    // The fill is 0.2 % under the highest price reached between placement and the trigger (the minutes' highs bound it).
    const highest = Math.max(Number(placed.body.activatePrice), ...btcMinutes(Math.floor(now / MINUTE) * MINUTE, done.triggerTime + 1).map((b) => b.high))
    assert.ok(Number(done.actualPrice) <= highest * 0.998 + 0.1, `${done.actualPrice} ≤ ${highest} × 0.998`)
    const child = (await t.call(keys, 'GET', '/fapi/v1/order', { symbol: 'BTCUSDT', orderId: done.actualOrderId })).body
    assert.equal(child.origType, 'TRAILING_STOP_MARKET')
  })

  it('a trailing stop with activatePrice waits until the price reached it', async () => {
    const keys = await t.account()
    await open(t, keys, -0.01)
    const now = await t.replayNow()
    // A BUY trailing (a short's stop) activates once the lowest price is at or under the activation price.
    const activate = dropLevel(now, 60)
    const placed = await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'BUY', type: 'TRAILING_STOP_MARKET', callbackRate: '0.1', activatePrice: tick(activate), quantity: '0.010', reduceOnly: 'true' }))
    assert.equal(placed.status, 200, JSON.stringify(placed.body))
    t.clock.advance(240 * MINUTE)
    const done = (await t.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: placed.body.algoId })).body
    assert.equal(done.algoStatus, 'FINISHED', JSON.stringify(done))
    const reached = btcMinutes(Math.floor(now / MINUTE) * MINUTE + MINUTE, now + 240 * MINUTE).find((b) => b.low <= activate)!
    assert.ok(done.triggerTime >= reached.time, 'not before the activation price was reached')
    assert.ok(Number(done.actualPrice) >= activate * 1.001 - 0.1 || Number(done.actualPrice) > activate, 'at least the callback above the lowest price')
  })

  it('priceProtect within the symbol triggerProtect (5 %) triggers as an unprotected order does', async () => {
    const a = await t.account()
    const b = await t.account()
    await open(t, a, 0.01)
    await open(t, b, 0.01)
    const level = tick(dropLevel(await t.replayNow()))
    const protectedOrder = (await t.call(a, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: level, closePosition: 'true', priceProtect: 'TRUE' }))).body
    const plain = (await t.call(b, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: level, closePosition: 'true' }))).body
    assert.equal(protectedOrder.priceProtect, true)
    t.clock.advance(31 * MINUTE)
    const [x, y] = [(await t.call(a, 'GET', '/fapi/v1/algoOrder', { algoId: protectedOrder.algoId })).body, (await t.call(b, 'GET', '/fapi/v1/algoOrder', { algoId: plain.algoId })).body]
    assert.deepEqual([x.algoStatus, x.triggerTime], [y.algoStatus, y.triggerTime])
  })

  it('triggered-first (a fault for the next trigger) sends TRIGGERED before the child fill; a STOP child is a LIMIT at its price', async () => {
    const keys = await t.account()
    const stream = await openUserStream(t, keys)
    await open(t, keys, -0.01)
    const level = riseLevel(await t.replayNow())
    t.exchange.faults.add({ algoEvents: 'triggered-first', times: 1, account: keys.apiKey })
    const placed = (await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'BUY', type: 'STOP', triggerPrice: tick(level), price: tick(level + 50), quantity: '0.010', reduceOnly: 'true', clientAlgoId: 'stop-limit' }))).body
    t.clock.advance(31 * MINUTE)
    const done = (await t.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: placed.algoId })).body
    assert.equal(done.algoStatus, 'FINISHED')
    assert.equal(done.actualType, 'LIMIT')
    await stream.next('FINISHED', (e) => e.e === 'ALGO_UPDATE' && e.o.X === 'FINISHED')
    const sequence = stream.events
      .filter((e) => (e.e === 'ALGO_UPDATE' && e.o.aid === placed.algoId) || (e.e === 'ORDER_TRADE_UPDATE' && e.o.c === 'stop-limit'))
      .map((e) => (e.e === 'ALGO_UPDATE' ? `ALGO ${e.o.X}` : `OTU ${e.o.x} ${e.o.o}`))
    assert.deepEqual(sequence, ['ALGO NEW', 'ALGO TRIGGERING', 'ALGO TRIGGERED', 'OTU NEW LIMIT', 'OTU TRADE LIMIT', 'ALGO FINISHED'])
    stream.close()
  })

  it('the reject fault ends the next trigger REJECTED with rm; a reduce-only child with nothing to reduce is REJECTED too; dropped ALGO_UPDATEs never arrive', async () => {
    const keys = await t.account()
    const stream = await openUserStream(t, keys, (key) => `/private/ws?listenKey=${key}&events=ALGO_UPDATE`)
    await open(t, keys, 0.01)
    const level = tick(dropLevel(await t.replayNow()))
    t.exchange.faults.add({ algo: 'reject', times: 1, account: keys.apiKey })
    const rejected = (await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: level, closePosition: 'true' }))).body
    // A BUY reduce-only stop on a long has nothing to reduce when it fires.
    const nothing = (await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'BUY', type: 'TAKE_PROFIT_MARKET', triggerPrice: level, quantity: '0.010', reduceOnly: 'true' }))).body
    t.clock.advance(31 * MINUTE)
    const x = (await t.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: rejected.algoId })).body
    const y = (await t.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: nothing.algoId })).body
    assert.deepEqual([x.algoStatus, x.actualOrderId, y.algoStatus], ['REJECTED', '', 'REJECTED'])
    assert.equal(await positionAmt(t, keys), 0.01, 'the position stays open, unprotected')
    await stream.next('REJECTED', (e) => e.o?.X === 'REJECTED' && e.o.aid === nothing.algoId)
    assert.deepEqual(algoEvents(stream.events, rejected.algoId), ['NEW', 'TRIGGERING', 'REJECTED'])
    assert.equal(stream.events.find((e) => e.o.aid === rejected.algoId && e.o.X === 'REJECTED').o.rm, 'Margin is insufficient.')
    assert.equal(stream.events.find((e) => e.o.aid === nothing.algoId && e.o.X === 'REJECTED').o.rm, 'ReduceOnly Order is rejected.')
    assert.ok(stream.events.every((e) => e.e === 'ALGO_UPDATE'), 'events= keeps ALGO_UPDATE only')

    t.exchange.faults.add({ userEvents: 'drop', event: 'ALGO_UPDATE', account: keys.apiKey })
    const silent = (await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: tick(Number(level) - 5000), quantity: '0.001' }))).body
    await t.call(keys, 'DELETE', '/fapi/v1/algoOrder', { algoId: silent.algoId })
    const marker = (await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: tick(Number(level) - 5000), quantity: '0.001' }))).body
    assert.equal(marker.algoStatus, 'NEW')
    t.exchange.faults.clear()
    await t.call(keys, 'DELETE', '/fapi/v1/algoOrder', { algoId: marker.algoId })
    await stream.next('the marker CANCELED', (e) => e.o?.aid === marker.algoId && e.o.X === 'CANCELED')
    assert.deepEqual(algoEvents(stream.events, silent.algoId), [], 'dropped')
    stream.close()
  })

  it('the unknown fault: an acknowledged placement that the query endpoints do not know for latencyMs (freqtrade#12681)', async () => {
    const keys = await t.account()
    t.exchange.faults.add({ algo: 'unknown', path: '/fapi/v1/algoOrder', latencyMs: 5000, times: 1, account: keys.apiKey })
    const far = tick(riseLevel(await t.replayNow()) + 5000)
    const placed = await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'BUY', type: 'STOP_MARKET', triggerPrice: far, quantity: '0.001' }))
    assert.equal(placed.status, 200)
    assert.deepEqual((await t.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: placed.body.algoId })).body, { code: -2013, msg: 'Order does not exist.' })
    assert.deepEqual((await t.call(keys, 'GET', '/fapi/v1/openAlgoOrders')).body, [])
    t.clock.advance(5000)
    assert.equal((await t.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: placed.body.algoId })).body.algoStatus, 'NEW')
    assert.equal((await t.call(keys, 'GET', '/fapi/v1/openAlgoOrders')).body.length, 1)
    await t.call(keys, 'DELETE', '/fapi/v1/algoOpenOrders', { symbol: 'BTCUSDT' })
  })

  it('faults over HTTP accept the algo kinds and name a bad one', async () => {
    const post = (body: unknown) => fetch(`${t.exchange.url}/__replay/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    assert.equal((await post({ algo: 'reject', times: 1 })).status < 300, true)
    assert.equal((await post({ algoEvents: 'triggered-first', times: 1 })).status < 300, true)
    const bad = await post({ algo: 'unknown' })
    assert.equal(bad.status, 400)
    assert.match(await bad.text(), /latencyMs/)
    t.exchange.faults.clear()
  })
})

describe('replay exchange trading: algo orders across a restart and the triggered-first option', () => {
  it('keeps an open algo order in the --state file, and it triggers after the restart', async () => {
    const dir = tempDir('replay-algo-state')
    const stateFile = path.join(dir, 'state.json')
    try {
      const first = await startTradingExchange({ stateFile })
      const keys = await first.account()
      await open(first, keys, 0.01)
      const now = await first.replayNow()
      const placed = (await first.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: tick(dropLevel(now)), closePosition: 'true', clientAlgoId: 'kept' }))).body
      await first.close()
      const second = await startTradingExchange({ stateFile, replayStart: now, algoEvents: 'triggered-first' })
      try {
        const stream = await openUserStream(second, keys)
        assert.equal((await second.call(keys, 'GET', '/fapi/v1/algoOrder', { clientAlgoId: 'kept' })).body.algoStatus, 'NEW')
        second.clock.advance(31 * MINUTE)
        const done = (await second.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: placed.algoId })).body
        assert.equal(done.algoStatus, 'FINISHED')
        assert.equal(await positionAmt(second, keys), 0)
        await poll('FINISHED', 5000, () => algoEvents(stream.events, placed.algoId).includes('FINISHED') || undefined)
        const order = stream.events.filter((e) => e.e === 'ALGO_UPDATE' || (e.e === 'ORDER_TRADE_UPDATE' && e.o.c === 'kept')).map((e) => (e.e === 'ALGO_UPDATE' ? e.o.X : e.o.x))
        assert.deepEqual(order, ['TRIGGERING', 'TRIGGERED', 'NEW', 'TRADE', 'FINISHED'], 'the start option sets the order')
        const next = (await second.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'BUY', type: 'STOP_MARKET', triggerPrice: tick(riseLevel(now) + 5000), quantity: '0.001' }))).body
        assert.ok(next.algoId > placed.algoId, 'algo ids continue')
        stream.close()
      } finally {
        await second.close()
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('priceProtect holds a stop back while |mark − last| / mark exceeds a (tiny) triggerProtect', async () => {
    // The project's data with BTCUSDT's triggerProtect cut to 0.000001: the mark's ±0.01 % deviation exceeds it most seconds.
    const dir = tempDir('replay-protect')
    const futures = path.join(dir, 'binance-um-futures')
    fs.mkdirSync(path.join(futures, 'snapshots'), { recursive: true })
    for (const name of fs.readdirSync(FUTURES_DIR)) if (name !== 'snapshots') fs.symlinkSync(path.join(FUTURES_DIR, name), path.join(futures, name))
    for (const name of fs.readdirSync(path.join(FUTURES_DIR, 'snapshots'))) if (!name.startsWith('exchangeInfo')) fs.symlinkSync(path.join(FUTURES_DIR, 'snapshots', name), path.join(futures, 'snapshots', name))
    const info = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(FUTURES_DIR, 'snapshots/exchangeInfo-20251224.json.gz'))).toString()) as { symbols: { symbol: string; triggerProtect: string }[] }
    info.symbols.find((s) => s.symbol === 'BTCUSDT')!.triggerProtect = '0.000001'
    fs.writeFileSync(path.join(futures, 'snapshots/exchangeInfo-20251224.json'), JSON.stringify(info))
    const t = await startTradingExchange({ dataDir: dir })
    try {
      const a = await t.account()
      const b = await t.account()
      await open(t, a, 0.01)
      await open(t, b, 0.01)
      const level = tick(dropLevel(await t.replayNow()))
      const guarded = (await t.call(a, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: level, closePosition: 'true', priceProtect: 'true' }))).body
      const plain = (await t.call(b, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: level, closePosition: 'true' }))).body
      t.clock.advance(31 * MINUTE)
      const x = (await t.call(a, 'GET', '/fapi/v1/algoOrder', { algoId: guarded.algoId })).body
      const y = (await t.call(b, 'GET', '/fapi/v1/algoOrder', { algoId: plain.algoId })).body
      assert.equal(y.algoStatus, 'FINISHED')
      assert.ok(x.algoStatus === 'NEW' || x.triggerTime > y.triggerTime, `protected: ${x.algoStatus} at ${x.triggerTime}, plain at ${y.triggerTime}`)
    } finally {
      await t.close()
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
