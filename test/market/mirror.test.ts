import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { callsTo } from './helpers.js'

type Row = Record<string, unknown>

describe('mirror endpoints forward the exchange unchanged', () => {
  let t: TestApp
  before(async () => {
    t = await startTestApp('pglite', {}, { replay: true })
  })
  after(() => t.close())

  const get = (url: string) => t.app.inject({ method: 'GET', url })
  const direct = async (path: string) => {
    const res = await fetch(`${t.replay!.url}${path}`)
    return { status: res.status, body: await res.text() }
  }

  it('GET /fapi/v1/fundingRate: the exchange’s bytes for the same query', async () => {
    const query = `symbol=ETHUSDT&startTime=${Date.UTC(2023, 0, 1)}&endTime=${Date.UTC(2023, 1, 1)}&limit=20`
    const res = await get(`/fapi/v1/fundingRate?${query}`)
    const upstream = await direct(`/fapi/v1/fundingRate?${query}`)
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^application\/json/)
    assert.equal(res.body, upstream.body)
    assert.equal((res.json() as Row[]).length, 20)
  })

  it('GET /fapi/v1/fundingRate without parameters uses the exchange’s defaults', async () => {
    const res = await get('/fapi/v1/fundingRate')
    assert.equal(res.statusCode, 200)
    const rows = res.json() as Row[]
    assert.ok(rows.length > 0)
    assert.deepEqual(Object.keys(rows[0]!).sort(), ['fundingRate', 'fundingTime', 'markPrice', 'symbol'])
  })

  it('forwards the exchange’s 4xx status and body', async () => {
    const res = await get('/fapi/v1/fundingRate?symbol=NOSUCHUSDT')
    const upstream = await direct('/fapi/v1/fundingRate?symbol=NOSUCHUSDT')
    assert.equal(upstream.status, 400)
    assert.equal(res.statusCode, 400)
    assert.equal(res.body, upstream.body)
    assert.equal(res.json().code, -1121)
  })

  it('validates the mirror’s own limits (422)', async () => {
    for (const query of ['limit=1001', 'limit=0', 'startTime=abc', 'symbol=a%00b', 'extra=1']) {
      const res = await get(`/fapi/v1/fundingRate?${query}`)
      assert.equal(res.statusCode, 422, query)
      assert.ok(Array.isArray(res.json().detail))
    }
  })

  it('GET /fapi/v1/ticker/24hr: every symbol’s row, the repeat served from the cache', async () => {
    const before = callsTo(t, '/fapi/v1/ticker/24hr')
    const res = await get('/fapi/v1/ticker/24hr')
    assert.equal(res.statusCode, 200)
    const rows = res.json() as Row[]
    const upstream = JSON.parse((await direct('/fapi/v1/ticker/24hr')).body) as Row[]
    assert.deepEqual(rows.map((row) => row.symbol).sort(), upstream.map((row) => row.symbol).sort())
    assert.deepEqual(Object.keys(rows[0]!).sort(), Object.keys(upstream[0]!).sort())
    const again = await get('/fapi/v1/ticker/24hr')
    assert.equal(again.body, res.body)
    assert.equal(callsTo(t, '/fapi/v1/ticker/24hr'), before + 2, 'one call for the mirror, one for the direct read')
    assert.equal((await get('/fapi/v1/ticker/24hr?symbol=BTCUSDT')).statusCode, 422)
  })

  for (const [path, upstreamPath] of [
    ['/topLongShortPositionRatio', '/futures/data/topLongShortPositionRatio'],
    ['/topLongShortAccountRatio', '/futures/data/topLongShortAccountRatio'],
  ] as const) {
    describe(`GET ${path}`, () => {
      it('forwards to /futures/data with period 5m and limit 10 by default', async () => {
        const res = await get(`${path}?symbol=BTCUSDT`)
        assert.equal(res.statusCode, 200)
        assert.equal(res.body, (await direct(`${upstreamPath}?symbol=BTCUSDT&period=5m&limit=10`)).body)
        assert.equal((res.json() as Row[]).length, 10)
      })

      it('passes period and limit', async () => {
        const res = await get(`${path}?symbol=ETHUSDT&period=4h&limit=30`)
        assert.equal(res.statusCode, 200)
        const rows = res.json() as Row[]
        assert.equal(rows.length, 30)
        assert.equal(Number(rows[1]!.timestamp) - Number(rows[0]!.timestamp), 4 * 3600_000)
      })

      it('answers 422 without a symbol and for a bad period or limit', async () => {
        const missing = await get(`${path}?period=5m`)
        assert.equal(missing.statusCode, 422)
        assert.deepEqual(missing.json().detail, [{ type: 'missing', loc: ['query', 'symbol'], msg: 'Field required' }])
        for (const query of ['period=7m', 'limit=501', 'limit=0', 'limit=2.5']) {
          const res = await get(`${path}?symbol=BTCUSDT&${query}`)
          assert.equal(res.statusCode, 422, query)
          assert.deepEqual(res.json().detail[0].loc, ['query', query.split('=')[0]])
        }
      })

      it('forwards the exchange’s refusal of an unknown symbol', async () => {
        const res = await get(`${path}?symbol=NOSUCHUSDT`)
        assert.equal(res.statusCode, 400)
        assert.equal(res.json().code, -1121)
      })
    })
  }
})
