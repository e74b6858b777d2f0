import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { BookTickerRow } from '../../src/replay-exchange/market-data/order-book.js'
import type { TickerRow } from '../../src/replay-exchange/market-data/ticker.js'
import { HOUR, type Kline, MINUTE, readCsv, SNAPSHOT_TIME, startTestExchange, type TestExchange } from './support.js'

interface Depth {
  lastUpdateId: number
  E: number
  T: number
  bids: [string, string][]
  asks: [string, string][]
}
type BookTicker = BookTickerRow
interface PriceTicker {
  symbol: string
  price: string
  time: number
}
interface PremiumIndex {
  symbol: string
  markPrice: string
  indexPrice: string
  lastFundingRate: string
}
interface FundingInfo {
  symbol: string
  adjustedFundingRateCap: string
  adjustedFundingRateFloor: string
  fundingIntervalHours: number
  disclaimer: boolean
}

describe('replay exchange: tickers, order book, open interest, price klines and funding info', () => {
  let t: TestExchange
  before(async () => {
    t = await startTestExchange()
  })
  after(() => t.close())

  it('serves the last price on /fapi/v1 and /fapi/v2/ticker/price, equal to the 24h ticker, with weight 1 or 2', async () => {
    const v1 = await t.get<PriceTicker>('/fapi/v1/ticker/price?symbol=BTCUSDT')
    const ticker = (await t.get<TickerRow>('/fapi/v1/ticker/24hr?symbol=BTCUSDT')).body
    const v2 = await t.get<PriceTicker>('/fapi/v2/ticker/price?symbol=BTCUSDT')
    assert.deepEqual(v1.body, v2.body)
    assert.equal(v1.body.price, ticker.lastPrice)
    assert.ok(v1.body.time <= SNAPSHOT_TIME && v1.body.time > SNAPSHOT_TIME - 1000)
    const before = Number(v2.headers.get('x-mbx-used-weight-1m'))
    const all = await t.get<PriceTicker[]>('/fapi/v2/ticker/price')
    assert.equal(Number(all.headers.get('x-mbx-used-weight-1m')) - before, 2)
    const all24h = (await t.get<TickerRow[]>('/fapi/v1/ticker/24hr')).body
    assert.deepEqual(
      all.body.map((row) => [row.symbol, row.price]),
      all24h.map((row) => [row.symbol, row.lastPrice]),
    )
    assert.equal((await t.get<{ code: number }>('/fapi/v2/ticker/price?symbol=NOPE')).body.code, -1121)
  })

  it('derives a book of one-tick levels around the price path, with Binance limits and weights', async () => {
    const tick = 0.1 // BTCUSDT's tickSize
    const { body: book, headers } = await t.get<Depth>('/fapi/v1/depth?symbol=BTCUSDT')
    assert.equal(book.bids.length, 500)
    assert.equal(book.asks.length, 500)
    assert.equal(book.E, SNAPSHOT_TIME)
    assert.equal(book.lastUpdateId, SNAPSHOT_TIME)
    const bids = book.bids.map(([p]) => Number(p))
    const asks = book.asks.map(([p]) => Number(p))
    assert.ok(Math.abs(asks[0]! - bids[0]! - tick) < 1e-6, `spread ${asks[0]! - bids[0]!}`)
    for (let i = 1; i < 500; i++) {
      assert.ok(Math.abs(bids[i - 1]! - bids[i]! - tick) < 1e-6 && Math.abs(asks[i]! - asks[i - 1]! - tick) < 1e-6)
    }
    for (const [, qty] of [...book.bids, ...book.asks]) assert.match(qty, /^\d+\.\d{3}$/)
    // The last trade lies within a tick of the touch.
    const last = Number((await t.get<PriceTicker>('/fapi/v1/ticker/price?symbol=BTCUSDT')).body.price)
    assert.ok(last >= bids[0]! - tick - 1e-6 && last <= asks[0]! + tick + 1e-6, `${last} vs ${bids[0]}/${asks[0]}`)

    // Weights by limit: 5–50 → 2, 100 → 5, 500 → 10, 1000 → 20.
    let used = Number(headers.get('x-mbx-used-weight-1m')) + 1 // and the ticker/price call
    for (const [limit, weight] of [[5, 2], [50, 2], [100, 5], [1000, 20]] as const) {
      const res = await t.get<Depth>(`/fapi/v1/depth?symbol=BTCUSDT&limit=${limit}`)
      assert.equal(res.body.bids.length, limit)
      assert.deepEqual(res.body.bids.slice(0, 5), book.bids.slice(0, 5), 'the same book at the same replay time')
      const now = Number(res.headers.get('x-mbx-used-weight-1m'))
      assert.equal(now - used, weight, `limit ${limit}`)
      used = now
    }
    const bad = await t.get<{ code: number; msg: string }>('/fapi/v1/depth?symbol=BTCUSDT&limit=7')
    assert.equal(bad.status, 400)
    assert.deepEqual(bad.body, { code: -1130, msg: "Data sent for parameter 'limit' is not valid." })
    assert.equal((await t.get<{ code: number }>('/fapi/v1/depth?limit=5')).body.code, -1102)
  })

  it('serves bookTicker as the top of that book, and moves the book with the replay clock', async () => {
    const book = (await t.get<Depth>('/fapi/v1/depth?symbol=ETHUSDT&limit=5')).body
    const top = (await t.get<BookTicker>('/fapi/v1/ticker/bookTicker?symbol=ETHUSDT')).body
    assert.deepEqual(top, {
      symbol: 'ETHUSDT',
      bidPrice: book.bids[0]![0],
      bidQty: book.bids[0]![1],
      askPrice: book.asks[0]![0],
      askQty: book.asks[0]![1],
      time: SNAPSHOT_TIME,
      lastUpdateId: SNAPSHOT_TIME,
    })
    const all = (await t.get<BookTicker[]>('/fapi/v1/ticker/bookTicker')).body
    assert.ok(all.length > 400, `${all.length} symbols`)
    assert.deepEqual(
      all.find((row) => row.symbol === 'ETHUSDT'),
      top,
    )
    t.clock.advance(30 * MINUTE)
    try {
      const later = (await t.get<BookTicker>('/fapi/v1/ticker/bookTicker?symbol=ETHUSDT')).body
      assert.equal(later.lastUpdateId, SNAPSHOT_TIME + 30 * MINUTE)
      assert.notEqual(later.bidQty + later.bidPrice, top.bidQty + top.bidPrice)
    } finally {
      t.clock.advance(-30 * MINUTE)
    }
  })

  it('serves current open interest: the recorded hourly sample where there is one, derived elsewhere', async () => {
    const recorded = readCsv('BTCUSDT-openInterestHist-1h-20260305-20260326.csv')
    const sample = recorded[5]!
    const at = Number(sample.timestamp) + 20 * MINUTE
    const other = await startTestExchange({ replayStart: at })
    try {
      const body = (await other.get<{ symbol: string; openInterest: string; time: number }>('/fapi/v1/openInterest?symbol=BTCUSDT')).body
      assert.deepEqual(body, { symbol: 'BTCUSDT', openInterest: Number(sample.sumOpenInterest).toFixed(3), time: at })
    } finally {
      await other.close()
    }
    const derived = (await t.get<{ openInterest: string; time: number }>('/fapi/v1/openInterest?symbol=ETHUSDT')).body
    assert.equal(derived.time, SNAPSHOT_TIME)
    assert.match(derived.openInterest, /^\d+\.\d{3}$/)
    // Derived as 0.3–0.6 days of ETH's volume (~5–10M ETH a day in June 2025) drifting ±15%.
    assert.ok(Number(derived.openInterest) > 500_000 && Number(derived.openInterest) < 10_000_000, derived.openInterest)
    assert.equal((await t.get<{ code: number }>('/fapi/v1/openInterest')).body.code, -1102)
  })

  it('serves mark, index and premium klines on the trade klines buckets, agreeing with premiumIndex now', async () => {
    const trade = (await t.get<Kline[]>('/fapi/v1/klines?symbol=BTCUSDT&interval=1m&limit=30')).body
    const mark = (await t.get<Kline[]>('/fapi/v1/markPriceKlines?symbol=BTCUSDT&interval=1m&limit=30')).body
    const index = (await t.get<Kline[]>('/fapi/v1/indexPriceKlines?pair=BTCUSDT&interval=1m&limit=30')).body
    const premium = (await t.get<Kline[]>('/fapi/v1/premiumIndexKlines?symbol=BTCUSDT&interval=1m&limit=30')).body
    const now = (await t.get<PremiumIndex>('/fapi/v1/premiumIndex?symbol=BTCUSDT')).body
    for (const rows of [mark, index, premium]) {
      assert.deepEqual(
        rows.map((r) => [r[0], r[6]]),
        trade.map((r) => [r[0], r[6]]),
      )
      for (const [, o, h, l, c, v, , q, , tb, tq] of rows) {
        assert.ok(Number(h) >= Math.max(Number(o), Number(c)) && Number(l) <= Math.min(Number(o), Number(c)))
        assert.deepEqual([v, q, tb, tq], ['0', '0', '0', '0'])
        assert.match(o, /^-?\d+\.\d{8}$/)
      }
    }
    // A complete minute is 60 one-second mark samples and 12 five-second premium samples, as in Binance's examples.
    assert.equal(mark[0]![8], 60)
    assert.equal(premium[0]![8], 12)
    // The open bar closes at the current mark and index.
    assert.equal(mark[29]![4], now.markPrice)
    assert.equal(index[29]![4], now.indexPrice)
    const impliedPremium = Number(now.markPrice) / Number(now.indexPrice) - 1
    assert.ok(Math.abs(Number(premium[29]![4]) - impliedPremium) < 1e-7, `${premium[29]![4]} vs ${impliedPremium}`)
    // The mark stays within 0.01% noise of the traded path.
    for (let i = 0; i < 30; i++) assert.ok(Math.abs(Number(mark[i]![4]) / Number(trade[i]![4]) - 1) < 0.0003)

    const hourly = (await t.get<Kline[]>(`/fapi/v1/markPriceKlines?symbol=XRPUSDT&interval=4h&startTime=${SNAPSHOT_TIME - 48 * HOUR}&limit=3`)).body
    assert.equal(hourly.length, 3)
    assert.equal(hourly[0]![0], SNAPSHOT_TIME - 48 * HOUR - ((SNAPSHOT_TIME - 48 * HOUR) % (4 * HOUR)) + 4 * HOUR)

    const errors: [string, number][] = [
      ['/fapi/v1/indexPriceKlines?symbol=BTCUSDT&interval=1m', -1102],
      ['/fapi/v1/markPriceKlines?symbol=BTCUSDT&interval=7m', -1120],
      ['/fapi/v1/premiumIndexKlines?symbol=NOPE&interval=1m', -1121],
      ['/fapi/v1/markPriceKlines?symbol=BTCUSDT&interval=1m&limit=1501', -1130],
    ]
    for (const [path, code] of errors) assert.equal((await t.get<{ code: number }>(path)).body.code, code, path)
  })

  it("lists funding info for every symbol with data now, each on its own grid (BTCUSDT's 8 hours), at weight 0", async () => {
    const premiums = (await t.get<PremiumIndex[]>('/fapi/v1/premiumIndex')).body
    const { body, headers } = await t.get<FundingInfo[]>('/fapi/v1/fundingInfo')
    assert.deepEqual(
      body.map((row) => row.symbol),
      premiums.map((row) => row.symbol),
    )
    assert.deepEqual(body.find((row) => row.symbol === 'BTCUSDT'), {
      symbol: 'BTCUSDT',
      adjustedFundingRateCap: '0.00750000',
      adjustedFundingRateFloor: '-0.00750000',
      fundingIntervalHours: 8,
      disclaimer: false,
    })
    const again = await t.get<FundingInfo[]>('/fapi/v1/fundingInfo')
    assert.equal(again.headers.get('x-mbx-used-weight-1m'), headers.get('x-mbx-used-weight-1m'))
  })
})
