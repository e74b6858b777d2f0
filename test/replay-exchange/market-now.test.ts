import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { TickerRow } from '../../src/replay-exchange/market-data/ticker.js'
import { DAY, HOUR, type Kline, MINUTE, readBars, SNAPSHOT_TIME, startTestExchange, type TestExchange } from './support.js'

type Ticker = TickerRow
interface Trade {
  id: number
  price: string
  qty: string
  quoteQty: string
  time: number
  isBuyerMaker: boolean
}
interface AggTrade {
  a: number
  p: string
  q: string
  f: number
  l: number
  T: number
  m: boolean
}

describe('replay exchange: current values move with the replay clock', () => {
  let t: TestExchange
  before(async () => {
    t = await startTestExchange()
  })
  after(() => t.close())

  const ticker = async (symbol: string) => (await t.get<Ticker>(`/fapi/v1/ticker/24hr?symbol=${symbol}`)).body
  const trades = async (query: string) => (await t.get<Trade[]>(`/fapi/v1/trades?${query}`)).body

  it('maps wall time onto recorded time from the default start', async () => {
    assert.equal((await t.get<{ serverTime: number }>('/fapi/v1/time')).body.serverTime, SNAPSHOT_TIME)
    t.clock.advance(90_000)
    assert.equal((await t.get<{ serverTime: number }>('/fapi/v1/time')).body.serverTime, SNAPSHOT_TIME + 90_000)
    t.clock.advance(-90_000)
  })

  it('agrees across the 24h ticker, recent trades, the open kline and the mark price', async () => {
    const tick = await ticker('BTCUSDT')
    const recent = await trades('symbol=BTCUSDT&limit=1000')
    const last = recent[recent.length - 1]!
    assert.equal(tick.lastPrice, last.price)
    assert.equal(tick.lastQty, last.qty)
    assert.equal(tick.lastId, last.id)
    assert.equal(tick.closeTime, SNAPSHOT_TIME)
    assert.equal(tick.openTime, SNAPSHOT_TIME - DAY)
    assert.equal(tick.count, tick.lastId - tick.firstId + 1)
    assert.ok(last.time <= SNAPSHOT_TIME && last.time > SNAPSHOT_TIME - 1000)
    const [open] = (await t.get<Kline[]>('/fapi/v1/klines?symbol=BTCUSDT&interval=1d&limit=1')).body
    assert.equal(open![4], tick.lastPrice)
    assert.ok(Number(tick.highPrice) >= Number(tick.lastPrice) && Number(tick.lowPrice) <= Number(tick.lastPrice))
    const mark = (await t.get<{ markPrice: string }>('/fapi/v1/premiumIndex?symbol=BTCUSDT')).body
    assert.ok(Math.abs(Number(mark.markPrice) / Number(tick.lastPrice) - 1) < 0.001)
    // The 24h volume is a day of recorded BTC volume (~170k BTC in June 2025), at a weighted price inside the range.
    assert.ok(Number(tick.volume) > 50_000 && Number(tick.volume) < 500_000, tick.volume)
    const vwap = Number(tick.weightedAvgPrice)
    assert.ok(vwap >= Number(tick.lowPrice) && vwap <= Number(tick.highPrice))
  })

  it('moves the price, the trades and the 24h window as the clock advances', async () => {
    const before = await ticker('BTCUSDT')
    t.clock.advance(2 * HOUR)
    const later = await ticker('BTCUSDT')
    assert.equal(later.closeTime, SNAPSHOT_TIME + 2 * HOUR)
    assert.equal(later.openTime, before.openTime + 2 * HOUR)
    assert.notEqual(later.lastPrice, before.lastPrice)
    assert.notEqual(later.volume, before.volume)
    assert.ok(later.firstId > before.firstId && later.lastId > before.lastId)
    // Two hours on, the minute just completed is served as recorded, and the price is inside the open minute's recorded range.
    const minute = Math.floor((SNAPSHOT_TIME + 2 * HOUR) / MINUTE) * MINUTE
    const rows = (await t.get<Kline[]>(`/fapi/v1/klines?symbol=BTCUSDT&interval=1m&startTime=${minute - MINUTE}&limit=2`)).body
    const recorded = readBars('BTCUSDT-1m-20250504-20250624.csv.gz').filter((b) => b.time >= minute - MINUTE && b.time <= minute)
    assert.deepEqual(rows[0]!.slice(1, 5).map(Number), [recorded[0]!.open, recorded[0]!.high, recorded[0]!.low, recorded[0]!.close])
    assert.equal(rows[1]![0], minute)
    assert.ok(Number(later.lastPrice) >= recorded[1]!.low && Number(later.lastPrice) <= recorded[1]!.high)
    t.clock.advance(-2 * HOUR)
  })

  it('runs faster with speed and later with replayStart', async () => {
    const start = Date.UTC(2024, 2, 14, 12)
    const fast = await startTestExchange({ replayStart: start, speed: 60 })
    try {
      fast.clock.advance(1000)
      assert.equal((await fast.get<{ serverTime: number }>('/fapi/v1/time')).body.serverTime, start + 60_000)
      const tick = (await fast.get<Ticker>('/fapi/v1/ticker/24hr?symbol=BTCUSDT')).body
      // March 2024: around the 73,881.4 futures high, nowhere near June 2025's 106k.
      assert.ok(Number(tick.lastPrice) > 65_000 && Number(tick.lastPrice) < 74_000, tick.lastPrice)
    } finally {
      await fast.close()
    }
  })

  it('serves recent trades ascending with contiguous ids and Binance fields', async () => {
    const recent = await trades('symbol=ETHUSDT')
    assert.equal(recent.length, 500)
    for (let i = 1; i < recent.length; i++) {
      assert.equal(recent[i]!.id, recent[i - 1]!.id + 1)
      assert.ok(recent[i]!.time >= recent[i - 1]!.time)
    }
    const trade = recent[0]!
    assert.deepEqual(Object.keys(trade).sort(), ['id', 'isBuyerMaker', 'price', 'qty', 'quoteQty', 'time'])
    assert.ok(Math.abs(Number(trade.quoteQty) - Number(trade.price) * Number(trade.qty)) < 0.01)
    assert.equal((await trades('symbol=ETHUSDT&limit=1000')).length, 1000)
    const errors = [
      ['limit=5', -1102],
      ['symbol=ETHUSDT&limit=1001', -1130],
      ['symbol=NOPE', -1121],
    ] as const
    for (const [query, code] of errors) assert.equal((await t.get<{ code: number }>(`/fapi/v1/trades?${query}`)).body.code, code)
  })

  it('serves aggTrades by id and by time, with the 1-hour window rule', async () => {
    const recent = await trades('symbol=BTCUSDT&limit=10')
    const from = recent[0]!.id
    const agg = (await t.get<AggTrade[]>(`/fapi/v1/aggTrades?symbol=BTCUSDT&fromId=${from}&limit=5`)).body
    assert.deepEqual(
      agg.map((a) => [a.a, a.p, a.q, a.T, a.m]),
      recent.slice(0, 5).map((r) => [r.id, r.price, r.qty, r.time, r.isBuyerMaker]),
    )
    const start = SNAPSHOT_TIME - 30 * MINUTE
    const byTime = (await t.get<AggTrade[]>(`/fapi/v1/aggTrades?symbol=BTCUSDT&startTime=${start}&endTime=${start + MINUTE}&limit=1000`)).body
    assert.ok(byTime.length > 10)
    assert.ok(byTime.every((a) => a.T >= start && a.T <= start + MINUTE))
    const tooLong = await t.get<{ code: number }>(`/fapi/v1/aggTrades?symbol=BTCUSDT&startTime=${start}&endTime=${start + 2 * HOUR}`)
    assert.equal(tooLong.body.code, -1127)
  })

  it('lists 24h tickers for every symbol with data, USDC-quoted ones included, weight 40', async () => {
    t.clock.advance(60_000)
    const res = await t.get<Ticker[]>('/fapi/v1/ticker/24hr')
    assert.equal(res.headers.get('x-mbx-used-weight-1m'), '40')
    assert.ok(res.body.length > 400)
    const symbols = new Set(res.body.map((r) => r.symbol))
    assert.ok(symbols.has('BTCUSDC') && symbols.has('SOLUSDT'))
    const big = res.body.filter((r) => Number(r.quoteVolume) >= 100_000_000)
    assert.ok(big.length >= 10 && big.length < 300, `${big.length} symbols over 100M`)
    t.clock.advance(-60_000)
  })

  it('derives the same values in every process for the same replay time', async () => {
    const other = await startTestExchange()
    try {
      for (const path of [
        '/fapi/v1/ticker/24hr?symbol=SUIUSDT',
        '/fapi/v1/trades?symbol=DOGEUSDT&limit=50',
        '/fapi/v1/premiumIndex?symbol=1000PEPEUSDT',
        '/fapi/v1/klines?symbol=SUIUSDT&interval=1d&limit=30',
      ]) {
        assert.deepEqual((await other.get(path)).body, (await t.get(path)).body, path)
      }
    } finally {
      await other.close()
    }
  })
})
