import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { TestApp } from '../support/app.js'
import { callsTo, startFrozenMarketApp, upstreamText } from './helpers.js'

type Row = Record<string, unknown>

describe('mirror endpoints forward the exchange unchanged', () => {
  let t: TestApp
  before(async () => {
    t = await startFrozenMarketApp()
  })
  after(() => t.close())

  const get = (url: string) => t.app.inject({ method: 'GET', url })
  const direct = (path: string) => upstreamText(t, path)

  it('GET /fapi/v1/fundingRate: the exchange’s bytes for the same query', async () => {
    const query = `symbol=ETHUSDT&startTime=${Date.UTC(2023, 0, 1)}&endTime=${Date.UTC(2023, 1, 1)}&limit=20`
    const res = await get(`/fapi/v1/fundingRate?${query}`)
    const upstream = await direct(`/fapi/v1/fundingRate?${query}`)
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^application\/json/)
    assert.equal(res.body, upstream.body)
    assert.equal((res.json() as Row[]).length, 20)
  })

  it('GET /fapi/v1/fundingRate without a limit answers the spec’s default of 500 rows (the exchange’s own is 100)', async () => {
    const res = await get('/fapi/v1/fundingRate?symbol=BTCUSDT')
    assert.equal(res.statusCode, 200)
    const rows = res.json() as Row[]
    assert.equal(rows.length, 500)
    assert.equal((JSON.parse((await direct('/fapi/v1/fundingRate?symbol=BTCUSDT')).body) as Row[]).length, 100)
    assert.deepEqual(Object.keys(rows[0]!).sort(), ['fundingRate', 'fundingTime', 'markPrice', 'symbol'])
    assert.equal((await get('/fapi/v1/fundingRate')).json().length, 500)
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
  })

  it('GET /fapi/v1/ticker/24hr?symbol= answers that symbol’s row object, read from the all-symbols answer', async () => {
    const all = (await get('/fapi/v1/ticker/24hr')).json() as Row[]
    const before = callsTo(t, '/fapi/v1/ticker/24hr')
    const res = await get('/fapi/v1/ticker/24hr?symbol=ETHUSDT')
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), all.find((row) => row.symbol === 'ETHUSDT'))
    assert.deepEqual((await get('/fapi/v1/ticker/24hr?symbol=btcusdt')).json().symbol, 'BTCUSDT')
    assert.equal(callsTo(t, '/fapi/v1/ticker/24hr'), before, 'no upstream call while the all-symbols answer is fresh')
    const single = JSON.parse((await direct('/fapi/v1/ticker/24hr?symbol=ETHUSDT')).body) as Row
    assert.deepEqual(Object.keys(res.json()), Object.keys(single), 'the exchange’s own one-symbol shape')
  })

  it('GET /fapi/v1/ticker/24hr?symbol= refuses an unlisted symbol as the exchange does, without asking it', async () => {
    await get('/fapi/v1/ticker/24hr?symbol=OTHERUSDT') // loads the cached exchange info the check reads
    const before = t.replay!.stats().requests
    const res = await get('/fapi/v1/ticker/24hr?symbol=NOSUCHUSDT')
    assert.equal(res.statusCode, 400)
    assert.equal(res.body, (await direct('/fapi/v1/ticker/24hr?symbol=NOSUCHUSDT')).body)
    assert.equal(t.replay!.stats().requests, before + 1, 'only the direct read reached the exchange')
    assert.equal((await get('/fapi/v1/ticker/24hr?symbol=a%00b')).statusCode, 422)
  })

  for (const [path, upstreamPath] of [
    ['/topLongShortPositionRatio', '/futures/data/topLongShortPositionRatio'],
    ['/topLongShortAccountRatio', '/futures/data/topLongShortAccountRatio'],
  ] as const) {
    describe(`GET ${path}`, () => {
      it('forwards to /futures/data with period 5m and limit 10 by default', async () => {
        const res = await get(`${path}?symbol=BTCUSDT`)
        assert.equal(res.statusCode, 200)
        const upstream = JSON.parse((await direct(`${upstreamPath}?symbol=BTCUSDT&period=5m&limit=10`)).body) as Row[]
        const rows = res.json() as Row[]
        assert.equal(rows.length, 10)
        if (path === '/topLongShortAccountRatio') assert.deepEqual(rows, upstream)
        else {
          // The spec's position-weighted row: longPosition and shortPosition beside the exchange's own fields.
          assert.deepEqual(
            rows,
            upstream.map((row) => ({ ...row, longPosition: row.longAccount, shortPosition: row.shortAccount })),
          )
          for (const row of rows) assert.equal(Number(row.longPosition) + Number(row.shortPosition), 1)
        }
      })

      it('passes startTime and endTime', async () => {
        const end = Number((JSON.parse((await direct(`${upstreamPath}?symbol=BTCUSDT&period=1h&limit=1`)).body) as Row[])[0]!.timestamp) - 24 * 3600_000
        const start = end - 5 * 3600_000
        const res = await get(`${path}?symbol=BTCUSDT&period=1h&startTime=${start}&endTime=${end}`)
        assert.equal(res.statusCode, 200)
        const rows = res.json() as Row[]
        assert.deepEqual(rows.map((row) => Number(row.timestamp)), [0, 1, 2, 3, 4, 5].map((i) => start + i * 3600_000))
        for (const query of [`startTime=abc`, `endTime=-1`]) assert.equal((await get(`${path}?symbol=BTCUSDT&${query}`)).statusCode, 422, query)
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
