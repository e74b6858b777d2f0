import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { DECIMAL, upstreamJson } from './helpers.js'

type Row = Record<string, unknown>
const FILTER_FIELDS: Record<string, Record<string, 'string' | 'number'>> = {
  PRICE_FILTER: { minPrice: 'string', maxPrice: 'string', tickSize: 'string' },
  LOT_SIZE: { minQty: 'string', maxQty: 'string', stepSize: 'string' },
  MARKET_LOT_SIZE: { minQty: 'string', maxQty: 'string', stepSize: 'string' },
  MIN_NOTIONAL: { minNotional: 'string' },
  MAX_NUM_ORDERS: { maxNumOrders: 'number' },
}

for (const backend of backends()) {
  describe(`/v1/market (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true })
    })
    after(() => t.close())
    const get = (url: string) => t.app.inject({ method: 'GET', url })

    describe('GET /v1/market/exchange-info', () => {
      it('lists every symbol with the spec’s fields, statuses and exactly the five filters', async () => {
        const res = await get('/v1/market/exchange-info')
        assert.equal(res.statusCode, 200)
        const body = res.json() as { serverTime: number; symbols: Row[] }
        assert.equal(body.serverTime, t.clock.now())
        const upstream = await upstreamJson<{ symbols: Row[] }>(t, '/fapi/v1/exchangeInfo')
        assert.equal(body.symbols.length, upstream.symbols.length)
        const statuses = new Set(body.symbols.map((symbol) => symbol.status))
        assert.ok([...statuses].every((status) => ['trading', 'halt', 'post_only', 'break'].includes(String(status))))
        for (const symbol of body.symbols) {
          assert.deepEqual(Object.keys(symbol).sort(), ['baseAsset', 'filters', 'pricePrecision', 'quantityPrecision', 'quoteAsset', 'status', 'symbol'])
          assert.ok(Number.isInteger(symbol.pricePrecision) && Number.isInteger(symbol.quantityPrecision))
          for (const filter of symbol.filters as Row[]) {
            const fields = FILTER_FIELDS[String(filter.filterType)]
            assert.ok(fields, `unexpected filter ${String(filter.filterType)}`)
            assert.deepEqual(Object.keys(filter).sort(), ['filterType', ...Object.keys(fields)].sort())
            for (const [field, type] of Object.entries(fields)) assert.equal(typeof filter[field], type, `${String(filter.filterType)}.${field}`)
          }
        }
        const byName = new Map(upstream.symbols.map((symbol) => [symbol.symbol, symbol]))
        const mapping = { TRADING: 'trading', PENDING_TRADING: 'break', SETTLING: 'halt', DELIVERING: 'halt', PRE_SETTLE: 'halt', CLOSE: 'halt', BREAK: 'break', HALT: 'halt' }
        for (const symbol of body.symbols) {
          const raw = String(byName.get(String(symbol.symbol))!.status)
          if (raw in mapping) assert.equal(symbol.status, mapping[raw as keyof typeof mapping], `${String(symbol.symbol)} ${raw}`)
        }
        assert.ok(statuses.has('trading') && statuses.size > 1, 'the snapshot has symbols that do not trade')
      })

      it('answers one symbol with its exchange values', async () => {
        const res = await get('/v1/market/exchange-info?symbol=BTCUSDT')
        assert.equal(res.statusCode, 200)
        const [btc] = (res.json() as { symbols: Row[] }).symbols
        assert.equal(btc!.symbol, 'BTCUSDT')
        assert.equal(btc!.status, 'trading')
        assert.equal(btc!.baseAsset, 'BTC')
        assert.equal(btc!.quoteAsset, 'USDT')
        const upstream = (await upstreamJson<{ symbols: Row[] }>(t, '/fapi/v1/exchangeInfo')).symbols.find((s) => s.symbol === 'BTCUSDT')!
        const raw = new Map((upstream.filters as Row[]).map((filter) => [filter.filterType, filter]))
        assert.deepEqual(btc!.filters, [
          { filterType: 'PRICE_FILTER', minPrice: raw.get('PRICE_FILTER')!.minPrice, maxPrice: raw.get('PRICE_FILTER')!.maxPrice, tickSize: raw.get('PRICE_FILTER')!.tickSize },
          { filterType: 'LOT_SIZE', minQty: raw.get('LOT_SIZE')!.minQty, maxQty: raw.get('LOT_SIZE')!.maxQty, stepSize: raw.get('LOT_SIZE')!.stepSize },
          { filterType: 'MARKET_LOT_SIZE', minQty: raw.get('MARKET_LOT_SIZE')!.minQty, maxQty: raw.get('MARKET_LOT_SIZE')!.maxQty, stepSize: raw.get('MARKET_LOT_SIZE')!.stepSize },
          { filterType: 'MIN_NOTIONAL', minNotional: raw.get('MIN_NOTIONAL')!.notional },
          { filterType: 'MAX_NUM_ORDERS', maxNumOrders: raw.get('MAX_NUM_ORDERS')!.limit },
        ])
      })

      it('answers 400 UNKNOWN_SYMBOL for a symbol the exchange does not list', async () => {
        const res = await get('/v1/market/exchange-info?symbol=NOSUCHUSDT')
        assert.equal(res.statusCode, 400)
        assert.equal(res.json().error.code, 'UNKNOWN_SYMBOL')
        assert.equal(res.json().error.field, 'symbol')
        assert.equal(res.json().error.request_id, res.headers['x-request-id'])
      })
    })

    describe('GET /v1/market/trades', () => {
      it('returns 500 trades by default, most recent first, consistent with the exchange', async () => {
        const res = await get('/v1/market/trades?symbol=BTCUSDT')
        assert.equal(res.statusCode, 200)
        const trades = res.json() as Row[]
        assert.equal(trades.length, 500)
        for (let i = 1; i < trades.length; i++) {
          assert.ok(Number(trades[i - 1]!.id) > Number(trades[i]!.id), 'ids decrease')
          assert.ok(Number(trades[i - 1]!.time) >= Number(trades[i]!.time), 'times do not increase')
        }
        for (const trade of trades) {
          assert.deepEqual(Object.keys(trade).sort(), ['id', 'isBuyerMaker', 'price', 'qty', 'quoteQty', 'time'])
          assert.match(String(trade.price), DECIMAL)
          assert.ok(Math.abs(Number(trade.price) * Number(trade.qty) - Number(trade.quoteQty)) < 0.01)
          assert.equal(typeof trade.isBuyerMaker, 'boolean')
        }
        const mark = (await upstreamJson<Row[]>(t, '/fapi/v1/premiumIndex')).find((row) => row.symbol === 'BTCUSDT')!
        assert.ok(Math.abs(Number(trades[0]!.price) / Number(mark.markPrice) - 1) < 0.02, 'the last trade is near the mark price')
      })

      it('honours limit 1..1000 and refuses anything else with 400 INVALID_PARAMETER', async () => {
        assert.equal(((await get('/v1/market/trades?symbol=ETHUSDT&limit=1')).json() as Row[]).length, 1)
        assert.equal(((await get('/v1/market/trades?symbol=ETHUSDT&limit=1000')).json() as Row[]).length, 1000)
        for (const limit of ['0', '1001', '-5', 'abc', '2.5']) {
          const res = await get(`/v1/market/trades?symbol=ETHUSDT&limit=${limit}`)
          assert.equal(res.statusCode, 400, limit)
          assert.equal(res.json().error.code, 'INVALID_PARAMETER')
          assert.equal(res.json().error.field, 'limit')
        }
      })

      it('needs a symbol (400 INVALID_PARAMETER) that exists (400 UNKNOWN_SYMBOL)', async () => {
        const missing = await get('/v1/market/trades?limit=10')
        assert.equal(missing.statusCode, 400)
        assert.deepEqual([missing.json().error.code, missing.json().error.field], ['INVALID_PARAMETER', 'symbol'])
        const unknown = await get('/v1/market/trades?symbol=NOSUCHUSDT')
        assert.equal(unknown.statusCode, 400)
        assert.equal(unknown.json().error.code, 'UNKNOWN_SYMBOL')
      })
    })

    describe('weights', () => {
      let limited: TestApp
      before(async () => {
        limited = await startTestApp(backend, { UPSTREAM_URL: t.replay!.url, RATE_LIMIT_WEIGHT_PER_MINUTE: '25' })
      })
      after(() => limited.close())

      it('charges 10 and 5 to the IP of an unsigned caller and answers 429 RATE_LIMITED past the budget', async () => {
        const first = await limited.app.inject({ method: 'GET', url: '/v1/market/exchange-info?symbol=BTCUSDT' })
        assert.equal(first.statusCode, 200)
        assert.equal(first.headers['x-service-used-weight-1m'], '10')
        const second = await limited.app.inject({ method: 'GET', url: '/v1/market/trades?symbol=BTCUSDT&limit=5' })
        assert.equal(second.statusCode, 200)
        assert.equal(second.headers['x-service-used-weight-1m'], '15')
        const third = await limited.app.inject({ method: 'GET', url: '/v1/market/exchange-info' })
        assert.equal(third.statusCode, 200)
        assert.equal(third.headers['x-service-used-weight-1m'], '25')
        const refused = await limited.app.inject({ method: 'GET', url: '/v1/market/trades?symbol=BTCUSDT' })
        assert.equal(refused.statusCode, 429)
        assert.equal(refused.json().error.code, 'RATE_LIMITED')
        assert.ok(Number(refused.headers['retry-after']) >= 1)
      })

      it('charges a signed caller’s key, not the IP, and needs market:read on the key', async () => {
        const key = await limited.createKey(['market:read'])
        const signed = await limited.signed(key, 'GET', '/v1/market/exchange-info?symbol=ETHUSDT')
        assert.equal(signed.statusCode, 200, signed.body)
        assert.equal(signed.headers['x-service-used-weight-1m'], '10')
        const other = await limited.createKey(['strategies:read'])
        const forbidden = await limited.signed(other, 'GET', '/v1/market/trades?symbol=ETHUSDT')
        assert.equal(forbidden.statusCode, 403)
        assert.equal(forbidden.json().error.code, 'INSUFFICIENT_PERMISSION')
        const badSignature = await limited.app.inject({
          method: 'GET',
          url: '/v1/market/trades?symbol=ETHUSDT',
          headers: { 'x-service-api-key': key.api_key, 'x-service-timestamp': String(limited.clock.now()), 'x-service-signature': '00' },
        })
        assert.equal(badSignature.statusCode, 401)
      })
    })
  })
}
