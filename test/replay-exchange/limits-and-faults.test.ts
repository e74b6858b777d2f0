import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestExchange, type TestExchange } from './support.js'

describe('replay exchange: request weight limit', () => {
  let t: TestExchange
  before(async () => {
    t = await startTestExchange()
  })
  after(() => t.close())

  it('counts weight per minute, answers 429 over 2400 with Retry-After, and bans an IP that keeps going', async () => {
    const agg = () => t.get<{ code?: number; msg?: string }>('/fapi/v1/aggTrades?symbol=BTCUSDT&limit=1') // weight 20
    const second = t.clock.value % 60_000
    t.clock.advance(60_000 - second + 1_000) // 1 s into a fresh minute
    for (let i = 1; i <= 120; i++) {
      const res = await agg()
      assert.equal(res.status, 200)
      assert.equal(res.headers.get('x-mbx-used-weight-1m'), String(20 * i))
    }
    const limited = await agg()
    assert.equal(limited.status, 429)
    assert.equal(limited.body.code, -1003)
    assert.equal(limited.headers.get('retry-after'), '59')
    assert.equal(limited.headers.get('x-mbx-used-weight-1m'), '2400')
    // futures/data has its own budget and is not refused by the weight limit.
    assert.equal((await t.get('/futures/data/openInterestHist?symbol=BTCUSDT&period=5m&limit=1')).status, 200)

    t.clock.advance(59_000)
    assert.equal((await agg()).status, 200, 'a new minute has a new budget')
    assert.equal((await agg()).headers.get('x-mbx-used-weight-1m'), '40')

    // Ignoring 429s: after 100 more refusals in one minute the IP is banned with 418.
    t.clock.advance(60_000)
    for (let i = 0; i < 120; i++) await agg()
    let status = 0
    for (let i = 0; i < 101 && status !== 418; i++) status = (await agg()).status
    assert.equal(status, 418)
    const banned = await t.get<{ code: number }>('/fapi/v1/time')
    assert.equal(banned.status, 418)
    assert.equal(banned.body.code, -1003)
    assert.ok(Number(banned.headers.get('retry-after')) > 60)
    t.clock.advance(121_000)
    assert.equal((await t.get('/fapi/v1/time')).status, 200)
  })
})

describe('replay exchange: fault injection', () => {
  let t: TestExchange
  before(async () => {
    t = await startTestExchange()
  })
  after(() => t.close())

  const time = () => t.get<{ code?: number; serverTime?: number }>('/fapi/v1/time')

  it('adds latency to matching requests only, for the given count', async () => {
    t.exchange.faults.add({ path: '/fapi/v1/time', latencyMs: 300, times: 1 })
    let started = performance.now()
    assert.equal((await time()).status, 200)
    assert.ok(performance.now() - started >= 290, 'the delayed request')
    started = performance.now()
    await time()
    assert.ok(performance.now() - started < 250, 'the fault was used up')
  })

  it('answers 429 and 418 with Retry-After', async () => {
    t.exchange.faults.add({ status: 429, retryAfterSeconds: 7, times: 1 })
    t.exchange.faults.add({ status: 418, retryAfterSeconds: 120, times: 1 })
    const first = await time()
    assert.equal(first.status, 429)
    assert.equal(first.headers.get('retry-after'), '7')
    assert.equal(first.body.code, -1003)
    const second = await time()
    assert.equal(second.status, 418)
    assert.equal(second.headers.get('retry-after'), '120')
    assert.equal((await time()).status, 200)
  })

  it('answers 5xx until cleared, scoped by path prefix and RegExp', async () => {
    t.exchange.faults.add({ path: '/fapi/v1/klines', status: 503 })
    t.exchange.faults.add({ path: /symbol=ETHUSDT/, status: 500 })
    t.exchange.faults.add({ path: '/fapi/v1/ticker', status: 502, times: 2 })
    for (let i = 0; i < 3; i++) assert.equal((await t.get('/fapi/v1/klines?symbol=BTCUSDT&interval=1h&limit=1')).status, 503)
    assert.equal((await t.get('/fapi/v1/trades?symbol=ETHUSDT&limit=1')).status, 500)
    assert.equal((await t.get('/fapi/v1/trades?symbol=BTCUSDT&limit=1')).status, 200)
    assert.equal((await t.get('/fapi/v1/ticker/24hr?symbol=BTCUSDT')).status, 502)
    assert.equal((await t.get('/fapi/v1/ticker/24hr?symbol=BTCUSDT')).status, 502)
    assert.equal((await t.get('/fapi/v1/ticker/24hr?symbol=BTCUSDT')).status, 200)
    assert.equal(t.exchange.faults.active().length, 2)
    t.exchange.faults.clear()
    assert.equal((await t.get('/fapi/v1/klines?symbol=BTCUSDT&interval=1h&limit=1')).status, 200)
  })

  it('drops the connection without a response', async () => {
    const remove = t.exchange.faults.add({ path: '/fapi/v1/premiumIndex', drop: true })
    await assert.rejects(fetch(`${t.exchange.url}/fapi/v1/premiumIndex?symbol=BTCUSDT`), TypeError)
    await assert.rejects(fetch(`${t.exchange.url}/fapi/v1/premiumIndex?symbol=BTCUSDT`), TypeError)
    remove()
    assert.equal((await t.get('/fapi/v1/premiumIndex?symbol=BTCUSDT')).status, 200)
  })

  it('counts upstream requests by path, faulted ones included', async () => {
    t.exchange.resetStats()
    t.exchange.faults.add({ status: 500, times: 1 })
    await time()
    await time()
    await t.get('/fapi/v1/klines?symbol=BTCUSDT&interval=1h&limit=1')
    await t.get('/__replay/stats')
    const archiveFile = '/data/futures/um/monthly/klines/BTCUSDT/1h/BTCUSDT-1h-2024-01.zip'
    assert.equal((await fetch(`${t.exchange.url}${archiveFile}`)).status, 200)
    assert.equal((await fetch(`${t.exchange.url}${archiveFile}.CHECKSUM`)).status, 200)
    // Archive files are counted apart: they cost no REST weight.
    assert.deepEqual(t.exchange.stats(), {
      requests: 3,
      byPath: { '/fapi/v1/time': 2, '/fapi/v1/klines': 1 },
      archiveFiles: 1,
      archiveByPath: { [archiveFile]: 1, [`${archiveFile}.CHECKSUM`]: 1 },
    })
    t.exchange.resetStats()
    assert.deepEqual(t.exchange.stats(), { requests: 0, byPath: {}, archiveFiles: 0, archiveByPath: {} })
  })

  it('is controlled over HTTP for the standalone process', async () => {
    const post = (body: unknown) =>
      fetch(`${t.exchange.url}/__replay/faults`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const bad = await post({ status: 400 })
    assert.equal(bad.status, 400)
    assert.match(((await bad.json()) as { error: string }).error, /status/)
    assert.equal((await post({ nonsense: 1, status: 500 })).status, 400)
    assert.equal((await post({ archive: 'gone' })).status, 400)
    assert.equal((await post({ archive: 'checksum', status: 500 })).status, 400, 'an archive fault is not a request fault')
    const added = await post({ pathRegExp: '^/fapi/v1/time', status: 503, retryAfterSeconds: 3, times: 2 })
    assert.equal(added.status, 201)
    assert.deepEqual(await added.json(), { active: [{ pathRegExp: '^/fapi/v1/time', status: 503, retryAfterSeconds: 3, times: 2 }] })
    const faulted = await time()
    assert.equal(faulted.status, 503)
    assert.equal(faulted.headers.get('retry-after'), '3')
    assert.equal((await fetch(`${t.exchange.url}/__replay/faults`, { method: 'DELETE' })).status, 200)
    assert.equal((await time()).status, 200)
    const stats = (await (await fetch(`${t.exchange.url}/__replay/stats`)).json()) as { requests: number; byPath: Record<string, number>; replayNow: number }
    assert.ok(stats.byPath['/fapi/v1/time']! >= 2)
    assert.equal(typeof stats.replayNow, 'number')
    await fetch(`${t.exchange.url}/__replay/stats`, { method: 'DELETE' })
    assert.deepEqual(t.exchange.stats(), { requests: 0, byPath: {}, archiveFiles: 0, archiveByPath: {} })
  })
})
