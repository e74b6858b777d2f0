import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { callsTo, DECIMAL, upstreamJson } from './helpers.js'

type Row = Record<string, unknown>

describe('public gateway endpoints against the replay exchange', () => {
  let t: TestApp
  before(async () => {
    t = await startTestApp('pglite', {}, { replay: true })
  })
  after(() => t.close())

  const get = (url: string) => t.app.inject({ method: 'GET', url })

  describe('GET /funding/rates', () => {
    it('lists the current funding rate of every perpetual the exchange reports, as decimal strings', async () => {
      const res = await get('/funding/rates')
      assert.equal(res.statusCode, 200)
      assert.match(String(res.headers['content-type']), /^application\/json/)
      const rows = res.json() as Row[]
      const premium = await upstreamJson<Row[]>(t, '/fapi/v1/premiumIndex')
      const perpetual = premium.filter((row) => row.lastFundingRate !== '')
      assert.deepEqual(rows.map((row) => row.symbol).sort(), perpetual.map((row) => row.symbol).sort())
      const btc = rows.find((row) => row.symbol === 'BTCUSDT')!
      const upstreamBtc = perpetual.find((row) => row.symbol === 'BTCUSDT')!
      assert.equal(btc.fundingRate, upstreamBtc.lastFundingRate)
      assert.equal(btc.nextFundingTime, upstreamBtc.nextFundingTime)
      for (const row of rows) {
        assert.match(String(row.fundingRate), DECIMAL)
        assert.ok(Math.abs(Number(row.fundingRate)) < 0.05, `${row.symbol} funding ${row.fundingRate} is implausible`)
        assert.ok(Number(row.markPrice) > 0)
      }
      assert.ok(Math.abs(Number(btc.markPrice) / Number(upstreamBtc.markPrice) - 1) < 0.01)
    })

    it("annualises each symbol's rate with its own funding interval from fundingInfo (4-hour symbols twice the 8-hour count)", async () => {
      const rows = (await get('/funding/rates')).json() as Row[]
      const info = await upstreamJson<Row[]>(t, '/fapi/v1/fundingInfo')
      const hours = new Map(info.map((row) => [row.symbol, Number(row.fundingIntervalHours)]))
      const bySymbol = new Map(rows.map((row) => [String(row.symbol), row]))
      for (const [symbol, interval] of [['BTCUSDT', 8], ['DIAUSDT', 4]] as const) {
        const row = bySymbol.get(symbol)!
        assert.equal(hours.get(symbol), interval)
        assert.equal(row.fundingIntervalHours, interval)
        const expected = (Number(row.fundingRate) * 365 * 24) / interval
        assert.ok(Math.abs(Number(row.annualizedRate) - expected) < 1e-8, `${symbol}: ${row.annualizedRate} vs ${expected}`)
        assert.match(String(row.annualizedRate), DECIMAL)
      }
      // One symbol's answer carries the same fields.
      assert.equal(((await get('/funding/rates/DIAUSDT')).json() as Row).fundingIntervalHours, 4)
    })

    it('answers one symbol from the same upstream answer; an unknown symbol is 400; lowercase is read as uppercase', async () => {
      const before = callsTo(t, '/fapi/v1/premiumIndex')
      const list = (await get('/funding/rates')).json() as Row[]
      const one = await get('/funding/rates/ETHUSDT')
      assert.equal(one.statusCode, 200)
      assert.deepEqual(one.json(), list.find((row) => row.symbol === 'ETHUSDT'))
      assert.deepEqual((await get('/funding/rates/ethusdt')).json(), one.json())
      assert.equal(callsTo(t, '/fapi/v1/premiumIndex'), before, 'served from the cache')
      const unknown = await get('/funding/rates/NOSUCHUSDT')
      assert.equal(unknown.statusCode, 400)
      assert.deepEqual(unknown.json(), { detail: 'unknown symbol NOSUCHUSDT' })
      const info = await upstreamJson<{ symbols: Row[] }>(t, '/fapi/v1/exchangeInfo')
      const delivery = info.symbols.find((symbol) => symbol.contractType !== 'PERPETUAL' && !list.some((row) => row.symbol === symbol.symbol))
      assert.ok(delivery, 'the exchange lists a contract without funding')
      const none = await get(`/funding/rates/${String(delivery.symbol)}`)
      assert.equal(none.statusCode, 404)
      assert.match(none.json().detail, /has no funding rate/)
    })

    it('refuses query parameters it does not take, in FastAPI shape', async () => {
      const res = await get('/funding/rates?symbol=BTCUSDT')
      assert.equal(res.statusCode, 422)
      assert.equal(res.json().detail[0].type, 'extra_forbidden')
      assert.deepEqual(res.json().detail[0].loc, ['query', 'symbol'])
    })
  })

  describe('GET /funding/rates/{symbol}/history', () => {
    it('returns 100 rows by default, oldest first, 8 hours apart, matching the exchange', async () => {
      const res = await get('/funding/rates/BTCUSDT/history')
      assert.equal(res.statusCode, 200)
      const rows = res.json() as Row[]
      assert.equal(rows.length, 100)
      for (let i = 1; i < rows.length; i++) {
        const gap = Number(rows[i]!.fundingTime) - Number(rows[i - 1]!.fundingTime)
        assert.ok(Math.abs(gap - 8 * 3600_000) < 60_000, `gap ${gap}`)
      }
      const direct = await upstreamJson<Row[]>(t, '/fapi/v1/fundingRate?symbol=BTCUSDT&limit=100')
      assert.deepEqual(rows, direct)
    })

    it('honours start_time, end_time and limit', async () => {
      const start = Date.UTC(2024, 0, 1)
      const end = Date.UTC(2024, 0, 3)
      const res = await get(`/funding/rates/XRPUSDT/history?start_time=${start}&end_time=${end}&limit=5`)
      assert.equal(res.statusCode, 200)
      const rows = res.json() as Row[]
      assert.equal(rows.length, 5)
      for (const row of rows) {
        assert.equal(row.symbol, 'XRPUSDT')
        assert.ok(Number(row.fundingTime) >= start && Number(row.fundingTime) <= end)
        assert.match(String(row.fundingRate), DECIMAL)
      }
    })

    it('validates its parameters', async () => {
      for (const query of ['limit=0', 'limit=1001', 'limit=abc', 'start_time=-1', 'end_time=1.5']) {
        const res = await get(`/funding/rates/BTCUSDT/history?${query}`)
        assert.equal(res.statusCode, 422, query)
        assert.equal(res.json().detail[0].loc[0], 'query', query)
      }
      const reversed = await get('/funding/rates/BTCUSDT/history?start_time=2000&end_time=1000')
      assert.equal(reversed.statusCode, 400)
      assert.deepEqual(reversed.json(), { detail: 'start_time must not be after end_time' })
      assert.equal((await get('/funding/rates/NOSUCHUSDT/history')).statusCode, 400)
    })
  })

  describe('GET /ticker/24hr/active', () => {
    it('keeps quoteVolume >= 100000000 by default, largest first, without USDC-quoted symbols', async () => {
      const res = await get('/ticker/24hr/active')
      assert.equal(res.statusCode, 200)
      const rows = res.json() as Row[]
      assert.ok(rows.length > 0)
      const volumes = rows.map((row) => Number(row.quoteVolume))
      for (let i = 1; i < volumes.length; i++) assert.ok(volumes[i - 1]! >= volumes[i]!, 'sorted by quoteVolume descending')
      assert.ok(volumes.every((volume) => volume >= 100_000_000))
      assert.ok(rows.every((row) => !String(row.symbol).endsWith('USDC')))
      const all = await upstreamJson<Row[]>(t, '/fapi/v1/ticker/24hr')
      const expected = all.filter((row) => Number(row.quoteVolume) >= 100_000_000 && !String(row.symbol).endsWith('USDC'))
      assert.deepEqual(new Set(rows.map((row) => row.symbol)), new Set(expected.map((row) => row.symbol)))
      assert.deepEqual(Object.keys(rows[0]!).sort(), Object.keys(expected[0]!).sort(), 'the full ticker shape')
    })

    it('applies min_quote_volume, and the exchange has USDC-quoted symbols for it to leave out', async () => {
      const all = await upstreamJson<Row[]>(t, '/fapi/v1/ticker/24hr')
      assert.ok(all.some((row) => String(row.symbol).endsWith('USDC')), 'the replay exchange lists USDC-quoted symbols')
      const everything = (await get('/ticker/24hr/active?min_quote_volume=0')).json() as Row[]
      assert.equal(everything.length, all.filter((row) => !String(row.symbol).endsWith('USDC')).length)
      const big = (await get('/ticker/24hr/active?min_quote_volume=5e9')).json() as Row[]
      assert.ok(big.length >= 1 && big.length < everything.length)
      assert.ok(big.every((row) => Number(row.quoteVolume) >= 5e9))
      for (const query of ['min_quote_volume=abc', 'min_quote_volume=', 'min_quote_volume=-1']) {
        assert.equal((await get(`/ticker/24hr/active?${query}`)).statusCode, 422, query)
      }
    })
  })

  describe('GET /long-short/{position,account}-ratio/{symbol}', () => {
    it('returns position-weighted rows with longPosition/shortPosition, 10 at 5m by default', async () => {
      const res = await get('/long-short/position-ratio/BTCUSDT')
      assert.equal(res.statusCode, 200)
      const rows = res.json() as Row[]
      assert.equal(rows.length, 10)
      const direct = await upstreamJson<Row[]>(t, '/futures/data/topLongShortPositionRatio?symbol=BTCUSDT&period=5m&limit=10')
      rows.forEach((row, i) => {
        assert.deepEqual(Object.keys(row).sort(), ['longPosition', 'longShortRatio', 'shortPosition', 'symbol', 'timestamp'])
        assert.equal(row.longPosition, direct[i]!.longAccount)
        assert.equal(row.longShortRatio, direct[i]!.longShortRatio)
        assert.equal(row.timestamp, Number(direct[i]!.timestamp))
        assert.ok(Math.abs(Number(row.longPosition) + Number(row.shortPosition) - 1) < 0.001)
        if (i > 0) assert.equal(Number(row.timestamp) - Number(rows[i - 1]!.timestamp), 5 * 60_000)
      })
    })

    it('returns account-weighted rows with longAccount/shortAccount for the period and limit asked', async () => {
      const res = await get('/long-short/account-ratio/ETHUSDT?period=1h&limit=24')
      assert.equal(res.statusCode, 200)
      const rows = res.json() as Row[]
      assert.equal(rows.length, 24)
      for (const [i, row] of rows.entries()) {
        assert.deepEqual(Object.keys(row).sort(), ['longAccount', 'longShortRatio', 'shortAccount', 'symbol', 'timestamp'])
        assert.ok(Math.abs(Number(row.longAccount) / Number(row.shortAccount) - Number(row.longShortRatio)) < 0.01)
        if (i > 0) assert.equal(Number(row.timestamp) - Number(rows[i - 1]!.timestamp), 3600_000)
      }
    })

    it('validates period and limit, and refuses unknown symbols', async () => {
      for (const query of ['period=3m', 'limit=0', 'limit=501', 'limit=x']) {
        const res = await get(`/long-short/position-ratio/BTCUSDT?${query}`)
        assert.equal(res.statusCode, 422, query)
        assert.equal(res.json().detail[0].loc[1], query.split('=')[0])
      }
      assert.equal((await get('/long-short/account-ratio/BTCUSDT?limit=500')).statusCode, 200)
      const unknown = await get('/long-short/account-ratio/NOSUCHUSDT')
      assert.equal(unknown.statusCode, 400)
      assert.deepEqual(unknown.json(), { detail: 'unknown symbol NOSUCHUSDT' })
    })
  })

  describe('GET /smart-money/signal/overview', () => {
    it('combines the top-trader series, open interest, taker volume and trades of one symbol', async () => {
      const res = await get('/smart-money/signal/overview?symbol=BTCUSDT')
      assert.equal(res.statusCode, 200)
      const body = res.json() as Row
      const account = (await upstreamJson<Row[]>(t, '/futures/data/topLongShortAccountRatio?symbol=BTCUSDT&period=5m&limit=13')).at(-1)!
      const position = (await upstreamJson<Row[]>(t, '/futures/data/topLongShortPositionRatio?symbol=BTCUSDT&period=5m&limit=13')).at(-1)!
      assert.equal(body.symbol, 'BTCUSDT')
      assert.equal(body.longAccountShare, account.longAccount)
      assert.equal(body.longPositionShare, position.longAccount)
      assert.equal(body.timestamp, Number(position.timestamp))
      const net = Number(body.longPositionShare) - Number(body.shortPositionShare)
      assert.ok(Math.abs(Number(body.netPositionShare) - net) < 0.0001)
      assert.ok(Math.abs(Number(body.netPositionValue) - net * Number(body.openInterestValue)) < 1)
      assert.ok(Number(body.openInterest) > 0 && Number(body.openInterestValue) > 0)
      const impliedPrice = Number(body.openInterestValue) / Number(body.openInterest)
      assert.ok(Math.abs(impliedPrice / Number(body.markPrice) - 1) < 0.05, 'open interest value agrees with the mark price')
      assert.ok(Number(body.takerBuyVolume1h) > 0 && Number(body.takerSellVolume1h) > 0)
      assert.ok(Number(body.averagePrice) > 0)
      assert.ok(Number.isInteger(body.whaleCount) && body.whaleCount === Number(body.whaleBuyCount) + Number(body.whaleSellCount))
      assert.ok(['bullish', 'bearish', 'neutral'].includes(String(body.signal)))
    })

    it('needs a symbol (422) that the exchange lists (400)', async () => {
      const missing = await get('/smart-money/signal/overview')
      assert.equal(missing.statusCode, 422)
      assert.deepEqual(missing.json().detail[0].loc, ['query', 'symbol'])
      assert.equal((await get('/smart-money/signal/overview?symbol=NOSUCHUSDT')).statusCode, 400)
    })
  })

  describe('GET /smart-money/signal/list', () => {
    it('ranks the most traded USDT symbols by |netPositionValue| over 24h by default', async () => {
      const res = await get('/smart-money/signal/list')
      assert.equal(res.statusCode, 200)
      const body = res.json() as { timeRange: string; period: string; rows: Row[] }
      assert.equal(body.timeRange, '24h')
      assert.equal(body.period, '1h')
      assert.ok(body.rows.length > 0 && body.rows.length <= 10)
      const magnitudes = body.rows.map((row) => Math.abs(Number(row.netPositionValue)))
      for (let i = 1; i < magnitudes.length; i++) assert.ok(magnitudes[i - 1]! >= magnitudes[i]!)
      body.rows.forEach((row, i) => {
        assert.equal(row.rank, i + 1)
        assert.ok(String(row.symbol).endsWith('USDT'))
        const net = Number(row.takerBuyVolume) - Number(row.takerSellVolume)
        assert.ok(Math.abs(Number(row.takerNetVolume) - net) < 1e-6)
      })
      assert.ok(body.rows.some((row) => row.symbol === 'BTCUSDT'))
    })

    it('reads each time range from a matching series', async () => {
      for (const [timeRange, period] of [['30m', '5m'], ['1h', '5m'], ['7d', '4h']]) {
        const res = await get(`/smart-money/signal/list?timeRange=${timeRange}`)
        assert.equal(res.statusCode, 200, timeRange)
        assert.equal(res.json().period, period)
        assert.equal(res.json().timeRange, timeRange)
      }
    })

    it('answers 400 with a detail for a timeRange outside the set', async () => {
      for (const value of ['2h', '1d', '24H', '']) {
        const res = await get(`/smart-money/signal/list?timeRange=${value}`)
        assert.equal(res.statusCode, 400, value)
        assert.deepEqual(res.json(), { detail: `timeRange must be one of 30m, 1h, 24h, 7d; got ${JSON.stringify(value)}` })
      }
    })
  })

  describe('GET /whale-board', () => {
    it('scores USDT symbols at or above 50M of quote volume, by score descending', async () => {
      const res = await get('/whale-board')
      assert.equal(res.statusCode, 200)
      const body = res.json() as { generatedAt: number; rows: Row[] }
      assert.equal(body.generatedAt, t.clock.now())
      assert.ok(body.rows.length > 0)
      for (let i = 1; i < body.rows.length; i++) assert.ok(Number(body.rows[i - 1]!.score) >= Number(body.rows[i]!.score))
      for (const row of body.rows) {
        assert.deepEqual(Object.keys(row).sort(), ['quoteVolume', 'score', 'symbol', 'whaleLongShort'])
        assert.ok(Number(row.quoteVolume) >= 50_000_000)
        assert.ok(String(row.symbol).endsWith('USDT'))
        const expected = Math.abs(Math.log(Number(row.whaleLongShort))) * Math.log10(Number(row.quoteVolume))
        assert.ok(Math.abs(Number(row.score) - expected) < 0.0001)
      }
      const btc = body.rows.find((row) => row.symbol === 'BTCUSDT')
      assert.ok(btc, 'BTCUSDT trades far above 50M')
      const latest = (await upstreamJson<Row[]>(t, '/futures/data/topLongShortPositionRatio?symbol=BTCUSDT&period=5m&limit=13')).at(-1)!
      assert.equal(btc.whaleLongShort, latest.longShortRatio)
    })

    it('covers every USDT symbol at or above the volume filter, not only the 50 most traded', async () => {
      const tickers = await upstreamJson<Row[]>(t, '/fapi/v1/ticker/24hr')
      const eligible = tickers.filter((row) => String(row.symbol).endsWith('USDT') && Number(row.quoteVolume) >= 1_000_000).map((row) => row.symbol)
      assert.ok(eligible.length > 50, `${eligible.length} symbols trade at least 1M`)
      const res = await get('/whale-board?min_quote_volume=1000000')
      assert.equal(res.statusCode, 200)
      const symbols = new Set((res.json() as { rows: Row[] }).rows.map((row) => row.symbol))
      assert.ok(symbols.size > 50, `${symbols.size} rows`)
      for (const symbol of symbols) assert.ok(eligible.includes(symbol), String(symbol))
      // Left out only where the exchange has no position series yet (a symbol listed after the replay's moment of data).
      for (const symbol of eligible.filter((name) => !symbols.has(name))) {
        const series = await fetch(`${t.replay!.url}/futures/data/topLongShortPositionRatio?symbol=${symbol}&period=5m&limit=13`)
        assert.ok(series.status !== 200 || ((await series.json()) as unknown[]).length === 0, `${symbol} has a series but no row`)
      }
    })

    it('applies min_quote_volume', async () => {
      const strict = (await get('/whale-board?min_quote_volume=10000000000')).json() as { rows: Row[] }
      assert.ok(strict.rows.every((row) => Number(row.quoteVolume) >= 1e10))
      assert.ok(strict.rows.length < ((await get('/whale-board')).json() as { rows: Row[] }).rows.length)
      assert.equal((await get('/whale-board?min_quote_volume=x')).statusCode, 422)
    })
  })
})
