import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { TestApp } from '../support/app.js'
import { callsTo, startFrozenMarketApp, upstreamText } from './helpers.js'

type Row = Record<string, unknown>

/** Binance's public USD-M endpoints mirrored under their own paths (our addition, issue 12). */
describe('Binance mirror endpoints beyond the spec', () => {
  let t: TestApp
  before(async () => {
    t = await startFrozenMarketApp()
  })
  after(() => t.close())

  const get = (url: string) => t.app.inject({ method: 'GET', url })
  const direct = (path: string) => upstreamText(t, path)

  for (const path of [
    '/fapi/v1/ping',
    '/fapi/v1/exchangeInfo',
    '/fapi/v1/klines?symbol=BTCUSDT&interval=1h&startTime=1749513600000&limit=20',
    '/fapi/v1/klines?symbol=ETHUSDT&interval=15m',
    '/fapi/v1/premiumIndex',
    '/futures/data/openInterestHist?symbol=BTCUSDT&period=1h&limit=20',
    '/futures/data/topLongShortAccountRatio?symbol=BTCUSDT&period=5m',
    '/futures/data/topLongShortPositionRatio?symbol=ETHUSDT&period=4h&limit=5',
    '/futures/data/globalLongShortAccountRatio?symbol=BTCUSDT&period=1h&startTime=1749513600000&endTime=1749600000000',
    '/futures/data/takerlongshortRatio?symbol=BTCUSDT&period=5m&limit=12',
    '/fapi/v1/openInterest?symbol=BTCUSDT',
    '/fapi/v1/fundingInfo',
    '/fapi/v1/ticker/price',
  ]) {
    it(`GET ${path}: the exchange’s bytes, the repeat and concurrent requests served by one upstream call`, async () => {
      const upstreamPath = path.split('?')[0]!
      const before = callsTo(t, upstreamPath)
      const answers = await Promise.all(Array.from({ length: 8 }, () => get(path)))
      const upstream = await direct(path)
      assert.equal(upstream.status, 200)
      for (const res of answers) {
        assert.equal(res.statusCode, 200)
        assert.match(String(res.headers['content-type']), /^application\/json/)
        assert.equal(res.body, upstream.body)
      }
      assert.equal((await get(path)).body, upstream.body)
      assert.equal(callsTo(t, upstreamPath), before + 2, 'one call for the mirror (coalesced, then cached), one direct read')
    })
  }

  for (const [path, symbol] of [
    ['/fapi/v1/ticker/price', 'ETHUSDT'],
    ['/fapi/v1/premiumIndex', 'XRPUSDT'],
  ] as const) {
    it(`GET ${path}?symbol= answers the symbol’s object from the all-symbols answer; Binance’s refusal for an unlisted one`, async () => {
      const all = (await get(path)).json() as Row[]
      const before = callsTo(t, path)
      const res = await get(`${path}?symbol=${symbol}`)
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), all.find((row) => row.symbol === symbol))
      assert.deepEqual(res.json(), JSON.parse((await direct(`${path}?symbol=${symbol}`)).body))
      assert.equal(callsTo(t, path), before + 1, 'only the direct read')
      const unknown = await get(`${path}?symbol=NOSUCHUSDT`)
      assert.equal(unknown.statusCode, 400)
      assert.deepEqual(unknown.json(), { code: -1121, msg: 'Invalid symbol.' })
    })
  }

  it('GET /fapi/v1/openInterest forwards the exchange’s refusal of an unknown symbol', async () => {
    const res = await get('/fapi/v1/openInterest?symbol=NOSUCHUSDT')
    assert.equal(res.statusCode, 400)
    assert.equal(res.body, (await direct('/fapi/v1/openInterest?symbol=NOSUCHUSDT')).body)
  })

  it('GET /fapi/v1/time: the exchange’s clock, moved on by ours while the answer is held', async () => {
    const first = (await get('/fapi/v1/time')).json().serverTime
    assert.equal(first, JSON.parse((await direct('/fapi/v1/time')).body).serverTime)
    const calls = callsTo(t, '/fapi/v1/time')
    t.clock.advance(3_000)
    assert.equal((await get('/fapi/v1/time')).json().serverTime, first + 3_000)
    assert.equal(callsTo(t, '/fapi/v1/time'), calls, 'held 10 s')
    t.clock.advance(8_000)
    assert.equal((await get('/fapi/v1/time')).json().serverTime, first, 'asked again after 10 s: the frozen exchange clock')
    assert.equal(callsTo(t, '/fapi/v1/time'), calls + 1)
  })

  it('validates Binance’s parameters with 422 and forwards the exchange’s refusals', async () => {
    for (const url of [
      '/fapi/v1/klines?symbol=BTCUSDT',
      '/fapi/v1/klines?symbol=BTCUSDT&interval=7m',
      '/fapi/v1/klines?symbol=BTCUSDT&interval=1h&limit=1501',
      '/fapi/v1/klines?interval=1h',
      '/fapi/v1/openInterest',
      '/fapi/v1/ping?x=1',
      '/futures/data/openInterestHist?symbol=BTCUSDT',
      '/futures/data/openInterestHist?symbol=BTCUSDT&period=1h&limit=501',
      '/futures/data/takerlongshortRatio?symbol=BTCUSDT&period=1h&startTime=abc',
    ]) {
      const res = await get(url)
      assert.equal(res.statusCode, 422, url)
      assert.ok(Array.isArray(res.json().detail), url)
    }
    const refused = await get('/fapi/v1/klines?symbol=NOSUCHUSDT&interval=1h')
    assert.equal(refused.statusCode, 400)
    assert.equal(refused.body, (await direct('/fapi/v1/klines?symbol=NOSUCHUSDT&interval=1h')).body)
  })

  it('marks the additions in the OpenAPI document', async () => {
    const paths = (await get('/openapi.json')).json().paths as Record<string, { get: { description?: string; tags: string[] } }>
    for (const path of ['/fapi/v1/ping', '/fapi/v1/time', '/fapi/v1/exchangeInfo', '/fapi/v1/klines', '/fapi/v1/premiumIndex', '/fapi/v1/openInterest', '/fapi/v1/fundingInfo', '/fapi/v1/ticker/price', '/futures/data/openInterestHist']) {
      assert.match(paths[path]!.get.description ?? '', /^Our addition/, path)
    }
    assert.doesNotMatch(paths['/fapi/v1/fundingRate']!.get.description ?? '', /Our addition/)
  })
})
