import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { MINUTE } from '../support.js'
import { algo, btcMinutes, dropLevel, minuteOf, open, positionAmt, riseLevel, tick } from './algo-support.js'
import { openUserStream, poll, startTradingExchange, type TradingExchange } from './support.js'

/** Binance's Algo Order service on the replay exchange: endpoints, errors and every status, on the recorded BTCUSDT minutes. */
describe('replay exchange trading: algo (conditional) orders', () => {
  let t: TradingExchange
  before(async () => {
    t = await startTradingExchange()
  })
  after(() => t.close())

  it('a close-all STOP_MARKET on the last price: NEW, listed apart from openOrders, then triggered at the first touch; the child fills at the trigger through the usual fill path', async () => {
    const keys = await t.account()
    const stream = await openUserStream(t, keys)
    await open(t, keys, 0.01)
    const now = await t.replayNow()
    const level = dropLevel(now)
    const placed = await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: tick(level), closePosition: 'true', clientAlgoId: 'stop-1' }))
    assert.equal(placed.status, 200, JSON.stringify(placed.body))
    assert.equal(placed.headers.get('x-mbx-order-count-1m'), '2', 'counts on the order counters')
    assert.deepEqual(
      Object.keys(placed.body),
      ['algoId', 'clientAlgoId', 'algoType', 'orderType', 'symbol', 'side', 'positionSide', 'timeInForce', 'quantity', 'algoStatus', 'triggerPrice', 'price', 'icebergQuantity', 'selfTradePreventionMode', 'workingType', 'priceMatch', 'closePosition', 'priceProtect', 'reduceOnly', 'createTime', 'updateTime', 'triggerTime', 'goodTillDate'],
    )
    assert.deepEqual([placed.body.clientAlgoId, placed.body.algoStatus, placed.body.workingType, placed.body.closePosition, placed.body.triggerTime], ['stop-1', 'NEW', 'CONTRACT_PRICE', true, 0])
    assert.deepEqual((await t.call(keys, 'GET', '/fapi/v1/openOrders', { symbol: 'BTCUSDT' })).body, [], 'algo orders are not plain open orders')
    const listed = (await t.call(keys, 'GET', '/fapi/v1/openAlgoOrders', { symbol: 'BTCUSDT' })).body
    assert.deepEqual(listed.map((o: { algoId: number }) => o.algoId), [placed.body.algoId])
    const byClient = (await t.call(keys, 'GET', '/fapi/v1/algoOrder', { clientAlgoId: 'stop-1' })).body
    assert.deepEqual([byClient.algoId, byClient.actualOrderId, byClient.actualQty], [placed.body.algoId, '', '0.000'])

    t.clock.advance(31 * MINUTE)
    const done = (await t.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: placed.body.algoId })).body
    assert.equal(done.algoStatus, 'FINISHED')
    assert.equal(await positionAmt(t, keys), 0, 'the whole position closed')
    // The first recorded minute (after placement) whose low reaches the trigger holds the trigger time.
    const triggerMinute = minuteOf(done.triggerTime)
    assert.ok(triggerMinute.low <= level, 'the path reached the trigger in that minute')
    for (const bar of btcMinutes(Math.floor(now / MINUTE) * MINUTE + MINUTE, triggerMinute.time)) assert.ok(bar.low > level, `no earlier touch (${bar.time})`)
    assert.ok(Math.abs(Number(done.actualPrice) - level) <= 0.5, `filled at the trigger: ${done.actualPrice} vs ${level}`)
    assert.deepEqual([done.actualType, done.actualQty], ['MARKET', '0.010'])

    const child = (await t.call(keys, 'GET', '/fapi/v1/order', { symbol: 'BTCUSDT', orderId: done.actualOrderId })).body
    assert.deepEqual(
      [child.clientOrderId, child.type, child.origType, child.status, child.reduceOnly, child.closePosition, child.stopPrice],
      ['stop-1', 'MARKET', 'STOP_MARKET', 'FILLED', true, true, level.toFixed(2)],
    )
    const trades = (await t.call(keys, 'GET', '/fapi/v1/userTrades', { symbol: 'BTCUSDT', orderId: done.actualOrderId })).body
    assert.equal(trades.length, 1)
    assert.equal(trades[0].maker, false)

    // Default event order: the child's fill, then TRIGGERED and FINISHED (nautilus#3664).
    await stream.next('FINISHED', (e) => e.e === 'ALGO_UPDATE' && e.o.X === 'FINISHED')
    const sequence = stream.events
      .filter((e) => (e.e === 'ALGO_UPDATE' && e.o.aid === placed.body.algoId) || (e.e === 'ORDER_TRADE_UPDATE' && e.o.c === 'stop-1') || (e.e === 'ACCOUNT_UPDATE' && e.E === done.triggerTime))
      .map((e) => (e.e === 'ALGO_UPDATE' ? `ALGO ${e.o.X}` : e.e === 'ORDER_TRADE_UPDATE' ? `OTU ${e.o.x} ${e.o.ot}` : 'ACCOUNT_UPDATE'))
    assert.deepEqual(sequence, ['ALGO NEW', 'ALGO TRIGGERING', 'OTU NEW STOP_MARKET', 'OTU TRADE STOP_MARKET', 'ACCOUNT_UPDATE', 'ALGO TRIGGERED', 'ALGO FINISHED'])
    const finished = stream.events.find((e) => e.e === 'ALGO_UPDATE' && e.o.X === 'FINISHED').o
    assert.deepEqual([finished.caid, finished.ai, finished.aq, finished.act, finished.tt, finished.cp], ['stop-1', done.actualOrderId, '0.010', 'MARKET', done.triggerTime, true])
    const triggered = stream.events.find((e) => e.e === 'ALGO_UPDATE' && e.o.X === 'TRIGGERED').o
    assert.deepEqual([triggered.ai, triggered.aq], [done.actualOrderId, '0.000'], 'TRIGGERED shows the child as placed')
    stream.close()
  })

  it('a TAKE_PROFIT_MARKET on the mark price triggers at a whole second whose mark reached it, and a quantity order reduces only', async () => {
    const keys = await t.account()
    await open(t, keys, 0.02)
    const now = await t.replayNow()
    const level = riseLevel(now)
    const placed = await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'TAKE_PROFIT_MARKET', triggerPrice: tick(level - 2), workingType: 'MARK_PRICE', quantity: '0.010', reduceOnly: 'true' }))
    assert.equal(placed.status, 200, JSON.stringify(placed.body))
    t.clock.advance(31 * MINUTE)
    const done = (await t.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: placed.body.algoId })).body
    assert.equal(done.algoStatus, 'FINISHED')
    assert.equal(done.triggerTime % 1000, 0, 'the mark moves once a second')
    // The mark stays within ±0.01 % of the path, so the trigger's minute had a high near the level.
    assert.ok(minuteOf(done.triggerTime).high >= (level - 2) * (1 - 0.0001))
    assert.equal(await positionAmt(t, keys), 0.01, 'only the quantity closed')
  })

  it("a trailing stop on the mark price sent without an activation price activates at the placement's mark, on the tick", async () => {
    const keys = await t.account()
    await open(t, keys, 0.01)
    const placed = await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'TRAILING_STOP_MARKET', callbackRate: '1', workingType: 'MARK_PRICE', quantity: '0.010', reduceOnly: 'true' }))
    assert.equal(placed.status, 200, JSON.stringify(placed.body))
    const shown = (await t.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: placed.body.algoId })).body
    const activate = Number(shown.activatePrice)
    assert.ok(activate > 0, JSON.stringify(shown))
    assert.equal(activate, Number(tick(activate)), `${shown.activatePrice}: a price of the tick (0.10), as the exchange shows every price`)
  })

  it('a second close-all order of the same type and side is -4130, a take-profit beside the stop is fine, and a closed position expires both (GTE)', async () => {
    const keys = await t.account()
    const stream = await openUserStream(t, keys)
    await open(t, keys, 0.01)
    const now = await t.replayNow()
    const stop = { side: 'SELL', type: 'STOP_MARKET', triggerPrice: tick(dropLevel(now) - 3000), closePosition: 'true' }
    assert.equal((await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo(stop))).status, 200)
    const again = await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo(stop))
    assert.deepEqual(again.body, { code: -4130, msg: 'An open stop or take profit order with GTE and closePosition in the direction is existing.' })
    const tp = await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'SELL', type: 'TAKE_PROFIT_MARKET', triggerPrice: tick(riseLevel(now) + 3000), closePosition: 'true' }))
    assert.equal(tp.status, 200, JSON.stringify(tp.body))

    await t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: '0.010', reduceOnly: 'true' })
    const statuses = (await t.call(keys, 'GET', '/fapi/v1/allAlgoOrders', { symbol: 'BTCUSDT' })).body.map((o: { algoStatus: string }) => o.algoStatus)
    assert.deepEqual(statuses, ['EXPIRED', 'EXPIRED'])
    assert.deepEqual((await t.call(keys, 'GET', '/fapi/v1/openAlgoOrders')).body, [])
    await poll('two EXPIRED events', 5000, () => stream.events.filter((e) => e.e === 'ALGO_UPDATE' && e.o.X === 'EXPIRED').length === 2 || undefined)
    stream.close()
  })

  it('cancels by algoId or clientAlgoId (ALGO_UPDATE CANCELED) and all of a symbol with DELETE algoOpenOrders; unknown ones are -2013 / -2011', async () => {
    const keys = await t.account()
    const stream = await openUserStream(t, keys)
    const now = await t.replayNow()
    const far = tick(riseLevel(now) + 5000)
    const a = (await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'BUY', type: 'STOP_MARKET', triggerPrice: far, quantity: '0.010', clientAlgoId: 'a-1' }))).body
    const b = (await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'BUY', type: 'STOP', triggerPrice: far, price: far, quantity: '0.010' }))).body
    const c = (await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'BUY', type: 'STOP_MARKET', triggerPrice: far, quantity: '0.010' }))).body
    assert.equal(b.timeInForce, 'GTC')
    const canceled = await t.call(keys, 'DELETE', '/fapi/v1/algoOrder', { clientAlgoId: 'a-1' })
    assert.deepEqual(canceled.body, { algoId: a.algoId, clientAlgoId: 'a-1', code: '200', msg: 'success' })
    assert.equal((await t.call(keys, 'DELETE', '/fapi/v1/algoOrder', { algoId: b.algoId }, { inBody: true })).status, 200)
    assert.deepEqual((await t.call(keys, 'DELETE', '/fapi/v1/algoOrder', { algoId: b.algoId })).body, { code: -2011, msg: 'Unknown order sent.' })
    assert.deepEqual((await t.call(keys, 'DELETE', '/fapi/v1/algoOpenOrders', { symbol: 'BTCUSDT' })).body, { code: 200, msg: 'The operation of cancel all open order is done.' })
    assert.equal((await t.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: c.algoId })).body.algoStatus, 'CANCELED')
    assert.deepEqual((await t.call(keys, 'GET', '/fapi/v1/algoOrder', { algoId: 42 })).body, { code: -2013, msg: 'Order does not exist.' })
    assert.equal((await t.call(keys, 'GET', '/fapi/v1/algoOrder', {})).body.code, -1102)
    await poll('three CANCELED events', 5000, () => stream.events.filter((e) => e.e === 'ALGO_UPDATE' && e.o.X === 'CANCELED').length === 3 || undefined)
    // allAlgoOrders: the last 7 days by default, a window over 7 days refused, page and limit.
    const all = await t.call(keys, 'GET', '/fapi/v1/allAlgoOrders', { symbol: 'BTCUSDT', limit: 2, page: 2 })
    assert.deepEqual(all.body.map((o: { algoId: number }) => o.algoId), [c.algoId])
    assert.equal((await t.call(keys, 'GET', '/fapi/v1/allAlgoOrders', { symbol: 'BTCUSDT', startTime: now - 8 * 86_400_000, endTime: now })).body.code, -4165)
    assert.equal((await t.call(keys, 'GET', '/fapi/v1/allAlgoOrders', {})).body.code, -1102)
    stream.close()
  })

  it("answers Binance's codes for bad algo orders", async () => {
    const keys = await t.account()
    await open(t, keys, 0.01)
    const now = await t.replayNow()
    const above = tick(riseLevel(now) + 1000)
    const below = tick(dropLevel(now) - 1000)
    const post = async (params: Record<string, string>) => (await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo(params))).body
    const code = async (params: Record<string, string>) => (await post(params)).code
    assert.deepEqual(await post({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: above, closePosition: 'true' }), { code: -2021, msg: 'Order would immediately trigger.' })
    assert.equal(await code({ side: 'BUY', type: 'TAKE_PROFIT_MARKET', triggerPrice: above, quantity: '0.010' }), -2021)
    assert.equal(await code({ side: 'SELL', type: 'TRAILING_STOP_MARKET', callbackRate: '1', activatePrice: below, quantity: '0.010' }), -2021, 'a SELL trailing needs activation above')
    assert.equal(await code({ side: 'BUY', type: 'TRAILING_STOP_MARKET', callbackRate: '1', activatePrice: above, quantity: '0.010' }), -2021, 'a BUY trailing needs activation below')
    assert.deepEqual(await post({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: below, closePosition: 'true', quantity: '0.010' }), { code: -4137, msg: 'Quantity must be zero with closePosition equals true.' })
    assert.deepEqual(await post({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: below, closePosition: 'true', reduceOnly: 'true' }), { code: -4138, msg: 'Reduce only must be true with closePosition equals true.' })
    assert.equal(await code({ side: 'SELL', type: 'STOP', triggerPrice: below, price: below, closePosition: 'true' }), -4020)
    assert.equal(await code({ side: 'SELL', type: 'TRAILING_STOP_MARKET', callbackRate: '1', closePosition: 'true' }), -4020)
    assert.equal(await code({ side: 'SELL', type: 'TRAILING_STOP_MARKET', callbackRate: '0.05', quantity: '0.010' }), -1130)
    assert.equal(await code({ side: 'SELL', type: 'TRAILING_STOP_MARKET', callbackRate: '20.5', quantity: '0.010' }), -1130)
    assert.equal(await code({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: below, quantity: '0.0101' }), -1111)
    assert.equal(await code({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: `${below}5`, quantity: '0.010' }), -4014)
    assert.equal(await code({ side: 'SELL', type: 'STOP_MARKET', quantity: '0.010' }), -1102)
    assert.equal(await code({ side: 'SELL', type: 'LIMIT', triggerPrice: below, quantity: '0.010' }), -1116)
    assert.equal(await code({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: below, quantity: '0.010', positionSide: 'LONG' }), -4061)
    assert.equal(await code({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: below, quantity: '0.010', workingType: 'INDEX' }), -1130)
    assert.equal((await t.call(keys, 'POST', '/fapi/v1/algoOrder', { algoType: 'VP', symbol: 'BTCUSDT', side: 'SELL', type: 'STOP_MARKET', triggerPrice: below, quantity: '0.010' })).body.code, -1130)
    assert.equal(await code({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: below, quantity: '0.010', clientAlgoId: 'bad id' }), -1100)
    assert.equal((await post({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: below, quantity: '0.010', clientAlgoId: 'dup' })).algoStatus, 'NEW')
    assert.equal(await code({ side: 'SELL', type: 'STOP_MARKET', triggerPrice: below, quantity: '0.010', clientAlgoId: 'dup' }), -4116)
    // The plain endpoint keeps refusing the conditional types.
    const plain = await t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: 'SELL', type: 'STOP_MARKET', stopPrice: below, quantity: '0.010' })
    assert.deepEqual(plain.body, { code: -4120, msg: 'Order type not supported for this endpoint. Please use the Algo Order API endpoints instead.' })
  })

  it('refuses the 201st open conditional order of an account with -4045', async () => {
    const keys = await t.account()
    const far = tick(riseLevel(await t.replayNow()) + 5000)
    for (let i = 0; i < 200; i++) {
      const res = await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'BUY', type: 'STOP_MARKET', triggerPrice: far, quantity: '0.001' }))
      assert.equal(res.status, 200, `order ${i}: ${JSON.stringify(res.body)}`)
    }
    assert.deepEqual((await t.call(keys, 'POST', '/fapi/v1/algoOrder', algo({ side: 'BUY', type: 'STOP_MARKET', triggerPrice: far, quantity: '0.001' }))).body, {
      code: -4045,
      msg: 'Reach max stop order limit.',
    })
    assert.equal((await t.call(keys, 'GET', '/fapi/v1/openAlgoOrders')).body.length, 200)
    await t.call(keys, 'DELETE', '/fapi/v1/algoOpenOrders', { symbol: 'BTCUSDT' })
  })
})
