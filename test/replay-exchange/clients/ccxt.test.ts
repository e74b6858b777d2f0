import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type ReplayExchange, startReplayExchange } from '../../../src/replay-exchange/index.js'
import { MINUTE, SNAPSHOT_TIME } from '../support.js'
import { binanceusdm, type Ccxt } from './clients.js'

const API_KEY = 'ccxtClientTestKey'
const SECRET = 'ccxtClientTestSecret'
const BTC = 'BTC/USDT:USDT'

describe('ccxt binanceusdm against the replay exchange', () => {
  let replay: ReplayExchange
  let exchange: Ccxt
  const rest = async <T>(path: string): Promise<T> => (await (await fetch(`${replay.url}${path}`)).json()) as T

  before(async () => {
    replay = await startReplayExchange({ accounts: [{ apiKey: API_KEY, secretKey: SECRET, balances: { USDT: '2500', BNB: '1.5' } }] })
    exchange = await binanceusdm(replay, { apiKey: API_KEY, secretKey: SECRET })
  })
  after(async () => {
    await exchange.close()
    await replay.close()
  })

  it('loads markets with keys set: the spot-wallet calls answer, and the clock syncs to /fapi/v1/time', async () => {
    const markets = await exchange.loadMarkets()
    assert.ok(Object.keys(markets).length > 600, `${Object.keys(markets).length} markets`)
    const btc = markets[BTC]!
    assert.equal(btc.id, 'BTCUSDT')
    assert.equal(btc.linear, true)
    assert.equal(btc.precision.price, 0.1)
    // The currencies come from /sapi/v1/capital/config/getall, which ccxt only calls with keys.
    assert.ok(exchange.currencies['USDT'] && exchange.currencies['BTC'] && exchange.currencies['BNB'])
    assert.equal(exchange.currencies['USDT']!.info.coin, 'USDT')
    const byPath = replay.stats().byPath
    assert.ok((byPath['/fapi/v1/time'] ?? 0) >= 1, 'the time sync asked /fapi/v1/time')
    // Replay time runs at the recording's 2025-06-17 while the wall clock is now: ccxt's offset is the gap.
    const gap = SNAPSHOT_TIME - Date.now()
    const offset = exchange.options['timeDifference'] as number
    assert.ok(Math.abs(-offset - gap) < 60_000, `offset ${offset}, gap ${gap}`)
  })

  it('fetches the time, klines and mark-price klines', async () => {
    const serverTime = await exchange.fetchTime()
    assert.ok(serverTime! >= SNAPSHOT_TIME && serverTime! < SNAPSHOT_TIME + 10 * MINUTE)
    const candles = await exchange.fetchOHLCV(BTC, '1m', undefined, 3)
    const raw = await rest<[number, string, string, string, string, string][]>('/fapi/v1/klines?symbol=BTCUSDT&interval=1m&limit=3')
    assert.equal(candles.length, 3)
    // The two closed bars are the recording's; the open one may have moved between the two calls.
    assert.deepEqual(candles.slice(0, 2), raw.slice(0, 2).map((r) => [r[0], ...r.slice(1, 6).map(Number)]))
    const marks = await exchange.fetchOHLCV(BTC, '1m', undefined, 3, { price: 'mark' })
    assert.deepEqual(
      marks.map((c) => c[0]),
      candles.map((c) => c[0]),
    )
    for (const [, o, h, l, c] of marks) assert.ok(h! >= Math.max(o!, c!) && l! <= Math.min(o!, c!))
  })

  it('fetches tickers, last prices, the order book and the best bid and ask', async () => {
    const ticker = await exchange.fetchTicker(BTC)
    assert.ok(ticker.last! > 90_000 && ticker.last! < 120_000, `${ticker.last}`)
    assert.ok(ticker.high! >= ticker.last! && ticker.low! <= ticker.last!)
    const tickers = await exchange.fetchTickers([BTC, 'ETH/USDT:USDT'])
    assert.deepEqual(Object.keys(tickers).sort(), [BTC, 'ETH/USDT:USDT'])
    const last = await exchange.fetchLastPrices([BTC])
    assert.ok(Math.abs(last[BTC]!.price! / ticker.last! - 1) < 0.01)

    const book = await exchange.fetchOrderBook(BTC, 5)
    assert.equal(book.bids.length, 5)
    assert.equal(book.asks.length, 5)
    const [bestBid] = book.bids[0]!
    const [bestAsk] = book.asks[0]!
    assert.ok(Math.abs(bestAsk! - bestBid! - 0.1) < 1e-6, `spread ${bestAsk! - bestBid!}`)
    assert.ok(book.bids.every(([p], i) => i === 0 || p! < book.bids[i - 1]![0]!))
    assert.ok(book.asks.every(([p], i) => i === 0 || p! > book.asks[i - 1]![0]!))
    const top = (await exchange.fetchBidsAsks([BTC]))[BTC]!
    assert.ok(top.ask! - top.bid! > 0 && top.ask! - top.bid! < 0.11)
  })

  it('fetches the funding rate, its history and interval, and open interest', async () => {
    const funding = await exchange.fetchFundingRate(BTC)
    const premium = await rest<{ lastFundingRate: string; nextFundingTime: number }>('/fapi/v1/premiumIndex?symbol=BTCUSDT')
    assert.equal(funding.fundingRate, Number(premium.lastFundingRate))
    assert.equal(funding.fundingTimestamp, premium.nextFundingTime)
    assert.equal(funding.fundingTimestamp! % (8 * 60 * MINUTE), 0)
    const history = await exchange.fetchFundingRateHistory(BTC, undefined, 3)
    assert.equal(history.length, 3)
    assert.ok(history.every((h) => h.timestamp! % (8 * 60 * MINUTE) < 1000 && h.timestamp! <= SNAPSHOT_TIME + 10 * MINUTE))
    const intervals = await exchange.fetchFundingIntervals([BTC])
    assert.equal(intervals[BTC]!.interval, '8h')
    const interest = await exchange.fetchOpenInterest(BTC)
    assert.ok(interest.openInterestAmount! > 10_000 && interest.openInterestAmount! < 500_000, `${interest.openInterestAmount}`)
  })

  it('watches klines on its default stream path (/market/ws) and sees the open bar update', async () => {
    const first = await exchange.watchOHLCV(BTC, '1m')
    const bar = first[first.length - 1]!
    const serverTime = await exchange.fetchTime()
    assert.equal(bar[0]! % MINUTE, 0)
    assert.ok(bar[0]! <= serverTime! && serverTime! - bar[0]! < 2 * MINUTE, `bar ${bar[0]} at ${serverTime}`)
    assert.ok(bar[4]! > 90_000 && bar[4]! < 120_000)
    const next = await exchange.watchOHLCV(BTC, '1m')
    assert.ok(next[next.length - 1]![0]! >= bar[0]!)
    const mark = await exchange.watchMarkPrice(BTC)
    assert.equal(mark.symbol, BTC)
  })

  it('watches the derived order book (diff depth over a REST snapshot) and the best bid and ask on their default streams', async () => {
    let book = await exchange.watchOrderBook(BTC)
    const first = book.nonce!
    // Two more diffs applied on ccxt's 1000-level snapshot: Binance's U / u / pu sync rules held.
    while (book.nonce! < first + 1500) book = await exchange.watchOrderBook(BTC)
    assert.equal(book.bids.length, 1000)
    assert.equal(book.asks.length, 1000)
    // Contiguous ticks from a one-tick spread outwards: a level a diff failed to remove would break it.
    const ticks = (levels: (number | undefined)[][]) => levels.map(([price]) => Math.round(price! * 10))
    const bids = ticks(book.bids)
    const asks = ticks(book.asks)
    assert.equal(asks[0]! - bids[0]!, 1)
    assert.ok(bids.every((p, i) => i === 0 || p === bids[i - 1]! - 1))
    assert.ok(asks.every((p, i) => i === 0 || p === asks[i - 1]! + 1))
    assert.ok([...book.bids, ...book.asks].every(([, qty]) => qty! > 0))
    const top = (await exchange.watchBidsAsks([BTC]))[BTC]!
    assert.ok(Math.abs(top.ask! - top.bid! - 0.1) < 1e-6 && top.bidVolume! > 0 && top.askVolume! > 0, JSON.stringify(top))
    const next = (await exchange.watchBidsAsks([BTC]))[BTC]!
    assert.ok(next.timestamp! > top.timestamp!)
  })

  it('fetches the futures balance', async () => {
    const before = replay.stats().byPath['/fapi/v3/account'] ?? 0
    const balance = await exchange.fetchBalance()
    assert.equal(replay.stats().byPath['/fapi/v3/account'], before + 1, 'ccxt reads the v3 account')
    assert.equal(balance['USDT']!.total, 2500)
    assert.equal(balance['USDT']!.free, 2500)
    assert.equal(balance['BNB']!.total, 1.5)
  })
})
