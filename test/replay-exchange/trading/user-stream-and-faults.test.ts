import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { poll } from '../../support/poll.js'
import { MINUTE } from '../support.js'
import { openUserStream, startTradingExchange, type TradingExchange } from './support.js'

describe('replay exchange trading: user data stream, order-count limits and trading faults', () => {
  let t: TradingExchange
  before(async () => {
    t = await startTradingExchange()
  })
  after(() => t.close())

  const market = (keys: { apiKey: string; secretKey: string }, side = 'BUY', extra: Record<string, string> = {}) =>
    t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side, type: 'MARKET', quantity: '0.002', ...extra })

  for (const [name, path] of [
    ['/ws/<listenKey>', (key: string) => `/ws/${key}`],
    ['/private/ws?listenKey=', (key: string) => `/private/ws?listenKey=${key}`],
  ] as const) {
    it(`sends ORDER_TRADE_UPDATE (NEW, TRADE) and ACCOUNT_UPDATE for every fill on ${name}`, async () => {
      const keys = await t.account()
      const stream = await openUserStream(t, keys, path)
      try {
        const res = await market(keys, 'BUY', { newClientOrderId: 'stream-1' })
        assert.equal(res.status, 200)
        const trade = await stream.next('the TRADE update', (e) => e.e === 'ORDER_TRADE_UPDATE' && e.o.x === 'TRADE')
        const account = await stream.next('the ACCOUNT_UPDATE', (e) => e.e === 'ACCOUNT_UPDATE')
        const [first] = stream.events
        assert.equal(first.o.x, 'NEW', 'NEW comes first')
        const fill = (await t.call(keys, 'GET', '/fapi/v1/userTrades', { symbol: 'BTCUSDT' })).body[0]
        assert.deepEqual(
          [trade.o.s, trade.o.c, trade.o.S, trade.o.X, trade.o.i, trade.o.l, trade.o.z, trade.o.L, trade.o.N, trade.o.n, trade.o.m, trade.o.t, trade.o.rp],
          ['BTCUSDT', 'stream-1', 'BUY', 'FILLED', res.body.orderId, '0.002', '0.002', fill.price, 'USDT', fill.commission, false, fill.id, '0.00000000'],
        )
        assert.equal(typeof trade.E, 'number')
        assert.equal(account.a.m, 'ORDER')
        assert.deepEqual([account.a.P[0].s, account.a.P[0].pa, account.a.P[0].mt, account.a.P[0].ps], ['BTCUSDT', '0.002', 'cross', 'BOTH'])
        assert.equal(account.a.B[0].a, 'USDT')
      } finally {
        stream.close()
      }
    })
  }

  it('keeps one listenKey per account for 60 minutes of replay time, extended by POST/PUT, then listenKeyExpired', async () => {
    const keys = await t.account()
    const stream = await openUserStream(t, keys)
    const post = () => fetch(`${t.exchange.url}/fapi/v1/listenKey`, { method: 'POST', headers: { 'x-mbx-apikey': keys.apiKey } }).then((r) => r.json())
    const first = (await post()) as { listenKey: string }
    assert.deepEqual(await post(), first, 'the active key again')
    t.clock.advance(61 * MINUTE)
    const expired = await stream.next('listenKeyExpired', (e) => e.e === 'listenKeyExpired')
    assert.equal(expired.listenKey, first.listenKey)
    const put = await fetch(`${t.exchange.url}/fapi/v1/listenKey`, { method: 'PUT', headers: { 'x-mbx-apikey': keys.apiKey } })
    assert.deepEqual(await put.json(), { code: -1125, msg: 'This listenKey does not exist.' })
    stream.close()
  })

  it('counts orders per account with X-MBX-ORDER-COUNT headers and refuses the 301st in 10 s with 429 -1015', async () => {
    const keys = await t.account({ USDT: '1000000' })
    t.clock.advance(10_000 - (t.clock.now() % 10_000))
    let last: Headers | undefined
    for (let i = 0; i < 300; i++) {
      const res = await market(keys, i % 2 === 0 ? 'BUY' : 'SELL')
      assert.equal(res.status, 200)
      last = res.headers
    }
    assert.equal(last!.get('x-mbx-order-count-10s'), '300')
    assert.equal(last!.get('x-mbx-order-count-1m'), '300')
    const refused = await market(keys)
    assert.equal(refused.status, 429)
    assert.deepEqual(refused.body, { code: -1015, msg: 'Too many new orders; current limit is 300 orders per 10 SECOND.' })
    t.clock.advance(10_000)
    const again = await market(keys)
    assert.equal(again.status, 200)
    assert.equal(again.headers.get('x-mbx-order-count-10s'), '1')
    assert.equal(again.headers.get('x-mbx-order-count-1m'), '301')
  })

  it('executes an order and then answers 503 unknown or -1007; the order exists', async () => {
    const keys = await t.account()
    t.exchange.faults.add({ path: '/fapi/v1/order', executeThen: 503, times: 1 })
    const unknown = await market(keys, 'BUY', { newClientOrderId: 'lost-1' })
    assert.equal(unknown.status, 503)
    assert.equal(unknown.body.msg, 'Unknown error, please check your request or try again later.')
    const found = await t.call(keys, 'GET', '/fapi/v1/order', { symbol: 'BTCUSDT', origClientOrderId: 'lost-1' })
    assert.equal(found.body.status, 'FILLED')
    const fault = await fetch(`${t.exchange.url}/__replay/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ path: '/fapi/v1/order', executeThen: -1007, times: 1 }) })
    assert.equal(fault.status, 201)
    const timeout = await market(keys, 'SELL', { newClientOrderId: 'lost-2' })
    assert.equal(timeout.status, 408)
    assert.deepEqual(timeout.body, { code: -1007, msg: 'Timeout waiting for response from backend server. Send status unknown; execution status unknown.' })
    assert.equal((await t.call(keys, 'GET', '/fapi/v1/order', { symbol: 'BTCUSDT', origClientOrderId: 'lost-2' })).body.status, 'FILLED')
  })

  it('"forgets" an existing order: -2013 while the fault lasts, found after', async () => {
    const keys = await t.account()
    const placed = await market(keys)
    t.exchange.faults.add({ path: '/fapi/v1/order', forget: true, times: 2 })
    for (let i = 0; i < 2; i++) assert.equal((await t.call(keys, 'GET', '/fapi/v1/order', { symbol: 'BTCUSDT', orderId: placed.body.orderId })).body.code, -2013)
    assert.equal((await t.call(keys, 'GET', '/fapi/v1/order', { symbol: 'BTCUSDT', orderId: placed.body.orderId })).body.status, 'FILLED')
  })

  it('drops or delays user-stream events, and closes user streams', async () => {
    const keys = await t.account()
    const stream = await openUserStream(t, keys)
    const remove = t.exchange.faults.add({ userEvents: 'drop', event: 'ACCOUNT_UPDATE' })
    await market(keys)
    await stream.next('the TRADE update', (e) => e.o?.x === 'TRADE')
    assert.equal(stream.events.filter((e) => e.e === 'ACCOUNT_UPDATE').length, 0)
    remove()
    t.exchange.faults.add({ userEvents: 'delay', latencyMs: 300, times: 1 })
    const sent = Date.now()
    await market(keys, 'SELL')
    await stream.next('the delayed NEW', (e) => e.o?.x === 'NEW' && e.o.S === 'SELL')
    assert.ok(Date.now() - sent >= 290, 'delayed')
    t.exchange.faults.clear()
    assert.equal(t.exchange.faults.closeUserStreams(keys.apiKey), 1)
    stream.close()
    const reopened = await openUserStream(t, keys)
    assert.equal(t.exchange.faults.expireListenKeys(keys.apiKey), 1)
    await reopened.next('listenKeyExpired', (e) => e.e === 'listenKeyExpired')
    reopened.close()
  })

  it('executes an order late (executeLate): after latencyMs, even when the client gave up waiting', async () => {
    const keys = await t.account()
    t.exchange.faults.add({ path: '/fapi/v1/order', executeLate: true, latencyMs: 400, times: 1 })
    const gaveUp = new AbortController()
    const order = { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.002', newClientOrderId: 'late-1' }
    const sending = t.call(keys, 'POST', '/fapi/v1/order', order, { signal: gaveUp.signal }).catch((error: Error) => error)
    await poll('the order at the venue', 5_000, () => (t.exchange.faults.active().length === 0 ? true : undefined))
    assert.equal((await t.call(keys, 'GET', '/fapi/v1/order', { symbol: 'BTCUSDT', origClientOrderId: 'late-1' })).body.code, -2013, 'not there yet')
    gaveUp.abort()
    assert.ok((await sending) instanceof Error, 'the client left')
    const found = await poll('the late order', 5_000, async () => {
      const answer = await t.call(keys, 'GET', '/fapi/v1/order', { symbol: 'BTCUSDT', origClientOrderId: 'late-1' })
      return answer.body.status === 'FILLED' ? answer.body : undefined
    })
    assert.equal(found.executedQty, '0.002')
  })

  it("scopes a fault to one account's requests and user-stream events", async () => {
    const [mine, other] = [await t.account(), await t.account()]
    t.exchange.faults.add({ path: '/fapi/v2/balance', status: 503, account: mine.apiKey })
    assert.equal((await t.call(mine, 'GET', '/fapi/v2/balance')).status, 503)
    assert.equal((await t.call(other, 'GET', '/fapi/v2/balance')).status, 200)
    const [myStream, otherStream] = [await openUserStream(t, mine), await openUserStream(t, other)]
    const remove = t.exchange.faults.add({ userEvents: 'drop', event: 'ORDER_TRADE_UPDATE', account: mine.apiKey })
    await market(mine)
    await market(other)
    await otherStream.next("the other account's TRADE update", (e) => e.o?.x === 'TRADE')
    await myStream.next('my ACCOUNT_UPDATE', (e) => e.e === 'ACCOUNT_UPDATE')
    assert.equal(myStream.events.filter((e) => e.e === 'ORDER_TRADE_UPDATE').length, 0)
    remove()
    t.exchange.faults.clear()
    myStream.close()
    otherStream.close()
  })
})
