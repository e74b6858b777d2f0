import assert from 'node:assert/strict'
import { after, afterEach, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { callsTo, timedGet } from './helpers.js'

/** The promise: a failing upstream is a 502 within 3 s. */
const MAX_502_MS = 3000

describe('upstream failures', () => {
  let t: TestApp
  before(async () => {
    t = await startTestApp('pglite', {}, { replay: true })
  })
  afterEach(() => {
    t.replay!.faults.clear()
    t.clock.advance(11 * 60_000) // past every TTL, stale window and back-off: each test starts cold
  })
  after(() => t.close())

  it('a 5xx is a 502 with a detail, not retried (one upstream call), and not forwarded by the mirror', async () => {
    t.replay!.faults.add({ path: '/fapi/v1/premiumIndex', status: 503 })
    const before = callsTo(t, '/fapi/v1/premiumIndex')
    const { res, ms } = await timedGet(t, '/funding/rates')
    assert.equal(res.statusCode, 502)
    assert.deepEqual(res.json(), { detail: 'the upstream exchange answered 503' })
    assert.ok(ms < MAX_502_MS)
    assert.equal(callsTo(t, '/fapi/v1/premiumIndex'), before + 1)
    t.replay!.faults.add({ path: '/fapi/v1/ticker/24hr', status: 500 })
    const mirror = await timedGet(t, '/fapi/v1/ticker/24hr')
    assert.equal(mirror.res.statusCode, 502)
    assert.equal(typeof mirror.res.json().detail, 'string')
    const v1 = await timedGet(t, '/v1/market/exchange-info?symbol=BTCUSDT')
    assert.equal(v1.res.statusCode, 200, 'another endpoint is unaffected')
    t.replay!.faults.add({ path: '/fapi/v1/trades', status: 502 })
    const trades = await timedGet(t, '/v1/market/trades?symbol=BTCUSDT')
    assert.equal(trades.res.statusCode, 502)
    assert.equal(trades.res.json().error.code, 'UPSTREAM_UNAVAILABLE')
  })

  it('an upstream that does not answer is a 502 within 3 s, on simple and composite endpoints', async () => {
    t.replay!.faults.add({ latencyMs: 10_000 })
    for (const url of ['/funding/rates', '/fapi/v1/fundingRate?symbol=BTCUSDT', '/topLongShortPositionRatio?symbol=BTCUSDT', '/smart-money/signal/list']) {
      const { res, ms } = await timedGet(t, url)
      assert.equal(res.statusCode, 502, url)
      assert.deepEqual(res.json(), { detail: 'the upstream exchange did not answer in time' }, url)
      assert.ok(ms < MAX_502_MS, `${url} took ${Math.round(ms)} ms`)
    }
  })

  it('a composite endpoint whose later calls stall still answers 502 within 3 s', async () => {
    // The tickers answer quickly; every /futures/data call then stalls.
    t.replay!.faults.add({ path: '/futures/data/', latencyMs: 10_000 })
    const { res, ms } = await timedGet(t, '/whale-board')
    assert.equal(res.statusCode, 502)
    assert.ok(ms < MAX_502_MS, `took ${Math.round(ms)} ms`)
  })

  it('a dropped connection is retried: one drop is invisible, endless drops are a 502 after three attempts', async () => {
    t.replay!.faults.add({ path: '/fapi/v1/fundingRate', drop: true, times: 1 })
    const before = callsTo(t, '/fapi/v1/fundingRate')
    const once = await timedGet(t, '/funding/rates/BTCUSDT/history?limit=3')
    assert.equal(once.res.statusCode, 200)
    assert.equal(callsTo(t, '/fapi/v1/fundingRate'), before + 2)

    t.replay!.faults.add({ path: '/fapi/v1/fundingRate', drop: true })
    const always = await timedGet(t, '/funding/rates/BTCUSDT/history?limit=4')
    assert.equal(always.res.statusCode, 502)
    assert.ok(always.ms < MAX_502_MS)
    assert.equal(callsTo(t, '/fapi/v1/fundingRate'), before + 5, 'three attempts, no more')
  })

  for (const status of [429, 418] as const) {
    it(`a ${status} stops every call to the exchange until Retry-After has passed: no retry storm`, async () => {
      t.replay!.faults.add({ path: '/fapi/v1/premiumIndex', status, retryAfterSeconds: 30 })
      const first = await timedGet(t, '/funding/rates')
      assert.equal(first.res.statusCode, 502)
      assert.equal(first.res.headers['retry-after'], '30')
      t.replay!.faults.clear()
      const calls = t.replay!.stats().requests
      const fundingInfo = callsTo(t, '/fapi/v1/fundingInfo')
      const urls = ['/funding/rates', '/ticker/24hr/active', '/fapi/v1/ticker/24hr', '/topLongShortAccountRatio?symbol=BTCUSDT', '/v1/market/trades?symbol=ETHUSDT']
      for (let round = 0; round < 20; round++) {
        for (const url of urls) {
          const { res } = await timedGet(t, url)
          assert.equal(res.statusCode, 502, url)
        }
      }
      assert.equal(t.replay!.stats().requests, calls, 'not one call while backing off')
      t.clock.advance(15_000)
      const halfway = await timedGet(t, '/funding/rates')
      assert.equal(halfway.res.statusCode, 502)
      assert.equal(halfway.res.headers['retry-after'], '15')
      t.clock.advance(15_000)
      const after = await timedGet(t, '/funding/rates')
      assert.equal(after.res.statusCode, 200, 'calls resume once Retry-After has passed')
      // One premiumIndex read, and fundingInfo (each symbol's funding interval) when its cache has expired meanwhile.
      const resumed = t.replay!.stats().requests - calls
      assert.ok(resumed === 1 + (callsTo(t, '/fapi/v1/fundingInfo') - fundingInfo), `${resumed} calls after the back-off`)
      assert.ok(callsTo(t, '/fapi/v1/fundingInfo') - fundingInfo <= 1)
    })
  }

  it('serves the last good answer while the upstream fails, for up to 10 minutes past its TTL', async () => {
    const good = await timedGet(t, '/funding/rates')
    assert.equal(good.res.statusCode, 200)
    t.replay!.faults.add({ path: '/fapi/v1/premiumIndex', status: 500 })
    t.clock.advance(6_000) // past the 5 s TTL
    const before = callsTo(t, '/fapi/v1/premiumIndex')
    const stale = await timedGet(t, '/funding/rates')
    assert.equal(stale.res.statusCode, 200)
    assert.equal(stale.res.body, good.res.body)
    assert.equal(callsTo(t, '/fapi/v1/premiumIndex'), before + 1, 'it did ask the upstream first')
    t.clock.advance(10 * 60_000)
    assert.equal((await timedGet(t, '/funding/rates')).res.statusCode, 502, 'too old to serve')
  })

  it('coalesces concurrent identical requests into one upstream call', async () => {
    t.replay!.faults.add({ path: '/fapi/v1/ticker/24hr', latencyMs: 300, times: 1 })
    const before = callsTo(t, '/fapi/v1/ticker/24hr')
    const urls = Array.from({ length: 60 }, (_, i) => ['/ticker/24hr/active', '/fapi/v1/ticker/24hr', '/ticker/24hr/active?min_quote_volume=0'][i % 3]!)
    const answers = await Promise.all(urls.map((url) => timedGet(t, url)))
    assert.ok(answers.every(({ res }) => res.statusCode === 200))
    assert.equal(callsTo(t, '/fapi/v1/ticker/24hr'), before + 1)
  })

  it('keeps coalescing when the shared load fails: one call, every waiter gets the 502', async () => {
    t.replay!.faults.add({ path: '/fapi/v1/exchangeInfo', latencyMs: 200, status: 503, times: 1 })
    const before = callsTo(t, '/fapi/v1/exchangeInfo')
    const answers = await Promise.all(Array.from({ length: 20 }, () => timedGet(t, '/v1/market/exchange-info')))
    assert.ok(answers.every(({ res }) => res.statusCode === 502))
    assert.equal(callsTo(t, '/fapi/v1/exchangeInfo'), before + 1)
  })
})
