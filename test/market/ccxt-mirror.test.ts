import assert from 'node:assert/strict'
import type { AddressInfo } from 'node:net'
import { after, before, describe, it } from 'node:test'
import ccxt from 'ccxt'
import type { TestApp } from '../support/app.js'
import { startFrozenMarketApp, upstreamJson } from './helpers.js'

type Row = Record<string, unknown>

/** The replay exchange's moment, held still so the mirror's answers and direct reads agree. */const BTC = 'BTC/USDT:USDT'

/**
 * ccxt's binanceusdm with Perpetua as its base URL (issue 12): only the URLs change, every request
 * goes to a real Perpetua app on 127.0.0.1, whose upstream is the replay exchange.
 */
describe('ccxt binanceusdm against the Perpetua mirror', () => {
  let t: TestApp
  let exchange: InstanceType<typeof ccxt.binanceusdm>
  const requested: string[] = []
  before(async () => {
    t = await startFrozenMarketApp()
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const base = `http://127.0.0.1:${(t.app.server!.address() as AddressInfo).port}`
    exchange = new ccxt.binanceusdm({ enableRateLimit: false, timeout: 5000 })
    const urls = exchange.urls.api as Record<string, string>
    for (const name of Object.keys(urls)) urls[name] = urls[name]!.replace(/^https:\/\/[^/]+/, base)
    const fetch = exchange.fetch.bind(exchange)
    exchange.fetch = (url: string, ...rest: unknown[]) => {
      requested.push(url)
      if (!url.startsWith(`${base}/`)) throw new Error(`ccxt left Perpetua for ${url}`)
      return (fetch as (...args: unknown[]) => Promise<unknown>)(url, ...rest)
    }
  })
  after(() => t.close())

  /** The methods that worked, for the closing figures. */
  const worked: string[] = []
  const check = (name: string, run: () => Promise<void>) =>
    it(name, async () => {
      await run()
      worked.push(name)
    })

  check('loadMarkets', async () => {
    const markets = await exchange.loadMarkets()
    const info = await upstreamJson<{ symbols: Row[] }>(t, '/fapi/v1/exchangeInfo')
    const listed = new Set(info.symbols.map((symbol) => symbol.symbol))
    assert.ok(Object.keys(markets).length >= info.symbols.length - 1, 'ccxt skips at most the one test symbol it cannot name')
    for (const market of Object.values(markets)) assert.ok(listed.has(market!.id), market!.id)
    const btc = markets[BTC]!
    assert.equal(btc.id, 'BTCUSDT')
    assert.equal(btc.linear, true)
    assert.ok(btc.precision.price !== undefined && btc.limits.amount?.min !== undefined)
  })

  check('fetchTime', async () => {
    const time = await exchange.fetchTime()
    assert.equal(time, (await upstreamJson<{ serverTime: number }>(t, '/fapi/v1/time')).serverTime)
  })

  check('fetchOHLCV', async () => {
    const since = Date.UTC(2025, 5, 10)
    const bars = await exchange.fetchOHLCV(BTC, '1h', since, 5)
    const upstream = await upstreamJson<unknown[][]>(t, `/fapi/v1/klines?symbol=BTCUSDT&interval=1h&startTime=${since}&limit=5`)
    assert.deepEqual(
      bars,
      upstream.map((bar) => [bar[0], Number(bar[1]), Number(bar[2]), Number(bar[3]), Number(bar[4]), Number(bar[5])]),
    )
  })

  check('fetchTicker', async () => {
    const ticker = await exchange.fetchTicker(BTC)
    const upstream = await upstreamJson<Row>(t, '/fapi/v1/ticker/24hr?symbol=BTCUSDT')
    assert.equal(ticker.symbol, BTC)
    assert.equal(ticker.last, Number(upstream.lastPrice))
    assert.equal(ticker.quoteVolume, Number(upstream.quoteVolume))
  })

  check('fetchTickers', async () => {
    const tickers = await exchange.fetchTickers()
    const upstream = await upstreamJson<Row[]>(t, '/fapi/v1/ticker/24hr')
    assert.equal(Object.keys(tickers).length, upstream.length)
    assert.equal(tickers[BTC]!.last, Number(upstream.find((row) => row.symbol === 'BTCUSDT')!.lastPrice))
  })

  check('fetchFundingRate', async () => {
    const rate = await exchange.fetchFundingRate(BTC)
    const upstream = await upstreamJson<Row>(t, '/fapi/v1/premiumIndex?symbol=BTCUSDT')
    assert.equal(rate.fundingRate, Number(upstream.lastFundingRate))
    assert.equal(rate.markPrice, Number(upstream.markPrice))
  })

  check('fetchFundingRates', async () => {
    const rates = await exchange.fetchFundingRates()
    const upstream = await upstreamJson<Row[]>(t, '/fapi/v1/premiumIndex')
    assert.ok(Object.keys(rates).length > 400)
    assert.equal(rates[BTC]!.fundingRate, Number(upstream.find((row) => row.symbol === 'BTCUSDT')!.lastFundingRate))
  })

  check('fetchFundingRateHistory', async () => {
    const history = await exchange.fetchFundingRateHistory(BTC)
    const upstream = await upstreamJson<Row[]>(t, '/fapi/v1/fundingRate?symbol=BTCUSDT&limit=500')
    assert.equal(history.length, 500, 'the spec’s default limit')
    assert.deepEqual(
      history.map((row) => [row.timestamp, row.fundingRate]),
      upstream.map((row) => [row.fundingTime, Number(row.fundingRate)]),
    )
  })

  check('fetchOpenInterestHistory', async () => {
    const history = await exchange.fetchOpenInterestHistory(BTC, '1h', undefined, 10)
    const upstream = await upstreamJson<Row[]>(t, '/futures/data/openInterestHist?symbol=BTCUSDT&period=1h&limit=10')
    assert.deepEqual(
      history.map((row) => [row.timestamp, row.openInterestAmount]),
      upstream.map((row) => [row.timestamp, Number(row.sumOpenInterest)]),
    )
  })

  check('fetchLongShortRatioHistory', async () => {
    const history = await exchange.fetchLongShortRatioHistory(BTC, '1h', undefined, 10)
    const upstream = await upstreamJson<Row[]>(t, '/futures/data/globalLongShortAccountRatio?symbol=BTCUSDT&period=1h&limit=10')
    assert.deepEqual(
      history.map((row) => [row.timestamp, row.longShortRatio]),
      upstream.map((row) => [row.timestamp, Number(row.longShortRatio)]),
    )
  })

  check('fetchOpenInterest', async () => {
    const interest = await exchange.fetchOpenInterest(BTC)
    const upstream = await upstreamJson<Row>(t, '/fapi/v1/openInterest?symbol=BTCUSDT')
    assert.equal(interest.openInterestAmount, Number(upstream.openInterest))
  })

  check('fetchFundingIntervals', async () => {
    const intervals = await exchange.fetchFundingIntervals()
    const upstream = await upstreamJson<Row[]>(t, '/fapi/v1/fundingInfo')
    assert.equal(Object.keys(intervals).length, upstream.length)
    assert.equal(intervals[BTC]!.interval, '8h')
  })

  check('fetchMarkPrice', async () => {
    const mark = await exchange.fetchMarkPrice(BTC)
    assert.equal(mark.markPrice, Number((await upstreamJson<Row>(t, '/fapi/v1/premiumIndex?symbol=BTCUSDT')).markPrice))
  })

  it('served all of it from the cache: asked again, ccxt’s requests reach the exchange no more', async () => {
    const before = t.replay!.stats().requests
    await exchange.loadMarkets(true)
    await exchange.fetchTickers()
    await exchange.fetchTicker(BTC)
    await exchange.fetchTicker('ETH/USDT:USDT') // a row of the same all-symbols answer
    await exchange.fetchFundingRates()
    await exchange.fetchFundingRate('ETH/USDT:USDT')
    await exchange.fetchOHLCV(BTC, '1h', Date.UTC(2025, 5, 10), 5)
    assert.equal(t.replay!.stats().requests, before)
  })

  it('every request ccxt made went to Perpetua', () => {
    assert.ok(requested.length >= 10)
    assert.deepEqual(worked.sort(), [
      'fetchFundingIntervals',
      'fetchFundingRate',
      'fetchFundingRateHistory',
      'fetchFundingRates',
      'fetchLongShortRatioHistory',
      'fetchMarkPrice',
      'fetchOHLCV',
      'fetchOpenInterest',
      'fetchOpenInterestHistory',
      'fetchTicker',
      'fetchTickers',
      'fetchTime',
      'loadMarkets',
    ])
  })
})
