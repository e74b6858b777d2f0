import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { USDMClient, WebsocketClient } from 'binance'
import { type ReplayExchange, startReplayExchange } from '../../../src/replay-exchange/index.js'
import { MINUTE, poll, SNAPSHOT_TIME } from '../support.js'
import { usdmClient, usdmWebsocket } from './clients.js'

const API_KEY = 'binancePackageTestKey'
const SECRET = 'binancePackageTestSecret'

type Row = [number, string, string, string, string, string, number, string, number, string, string, string]

describe('the binance package (USDMClient, WebsocketClient) against the replay exchange', () => {
  let replay: ReplayExchange
  let client: USDMClient
  let ws: WebsocketClient | undefined

  before(async () => {
    replay = await startReplayExchange({ accounts: [{ apiKey: API_KEY, secretKey: SECRET, balances: { USDT: '1234.5' } }] })
    // Only the base URL differs from production; time sync is on (off by default in the package).
    client = usdmClient(replay, { apiKey: API_KEY, secretKey: SECRET })
  })
  after(async () => {
    ws?.closeAll(true)
    await replay.close()
  })

  it('syncs its clock to /fapi/v1/time and reads server time and exchange info', async () => {
    await client.syncTime()
    const gap = SNAPSHOT_TIME - Date.now()
    assert.ok(Math.abs(client.getTimeOffset() - gap) < 60_000, `offset ${client.getTimeOffset()}, gap ${gap}`)
    const serverTime = await client.getServerTime()
    assert.ok(serverTime >= SNAPSHOT_TIME && serverTime < SNAPSHOT_TIME + 10 * MINUTE)
    const info = await client.getExchangeInfo()
    assert.ok(info.symbols.some((s) => s.symbol === 'BTCUSDT'))
  })

  it('reads klines and the mark, index and premium klines on the same buckets', async () => {
    const trade = (await client.getKlines({ symbol: 'BTCUSDT', interval: '1m', limit: 3 })) as unknown as Row[]
    const mark = (await client.getMarkPriceKlines({ symbol: 'BTCUSDT', interval: '1m', limit: 3 })) as unknown as Row[]
    const index = (await client.getIndexPriceKlines({ pair: 'BTCUSDT', interval: '1m', limit: 3 })) as unknown as Row[]
    const premium = (await client.getPremiumIndexKlines({ symbol: 'BTCUSDT', interval: '1m', limit: 3 })) as unknown as Row[]
    for (const rows of [mark, index, premium]) {
      assert.deepEqual(
        rows.slice(0, 2).map((r) => r[0]),
        trade.slice(0, 2).map((r) => r[0]),
      )
    }
    // Mark over index is one plus the premium.
    const implied = Number(mark[0]![1]) / Number(index[0]![1]) - 1
    assert.ok(Math.abs(implied - Number(premium[0]![1])) < 1e-7, `${implied} vs ${premium[0]![1]}`)
  })

  it('reads the order book, bookTicker, price tickers, funding info, mark price and open interest', async () => {
    const book = await client.getOrderBook({ symbol: 'ETHUSDT', limit: 10 })
    assert.equal(book.bids.length, 10)
    assert.equal(book.asks.length, 10)
    assert.ok(Number(book.asks[0]![0]) > Number(book.bids[0]![0]))
    const top = await client.getSymbolOrderBookTicker({ symbol: 'ETHUSDT' })
    assert.equal(top.symbol, 'ETHUSDT')
    assert.ok(Math.abs(Number(top.askPrice) - Number(top.bidPrice) - 0.01) < 1e-9, `${top.bidPrice}/${top.askPrice}`)
    const v1 = await client.getSymbolPriceTicker({ symbol: 'ETHUSDT' })
    const v2 = await client.getSymbolPriceTickerV2({ symbol: 'ETHUSDT' })
    assert.ok(Math.abs(Number(v1.price) / Number(v2.price) - 1) < 0.01)
    const fundingInfo = await client.getFundingRates()
    assert.equal(fundingInfo.find((row) => row.symbol === 'ETHUSDT')?.fundingIntervalHours, 8)
    const mark = await client.getMarkPrice({ symbol: 'ETHUSDT' })
    assert.ok(Math.abs(Number(mark.markPrice) / Number(v2.price) - 1) < 0.001)
    const interest = await client.getOpenInterest({ symbol: 'ETHUSDT' })
    assert.equal(interest.symbol, 'ETHUSDT')
    assert.ok(Number(interest.openInterest) > 0)
  })

  it('subscribes to klines through the WebsocketClient on its default path (/market/stream)', async () => {
    const socket = usdmWebsocket(replay, { apiKey: API_KEY, secretKey: SECRET })
    ws = socket
    const urls: string[] = []
    const events: { e?: string; s?: string; k?: { i: string; t: number; x: boolean } }[] = []
    socket.on('open', (event) => urls.push(String((event as { ws?: { url?: string } }).ws?.url)))
    socket.on('message', (message) => events.push(message as (typeof events)[number]))
    await socket.subscribeKlines('BTCUSDT', '1m', 'usdm')
    const kline = await poll('a kline event', 10_000, () => events.find((m) => m.e === 'kline'))
    assert.equal(kline.s, 'BTCUSDT')
    assert.equal(kline.k!.i, '1m')
    assert.equal(kline.k!.t % MINUTE, 0)
    assert.deepEqual(urls, [`${replay.wsUrl}/market/stream`])
    await poll('a second update of the open bar', 5_000, () => (events.filter((m) => m.e === 'kline').length >= 2 ? true : undefined))
  })

  it('subscribes to partial depth and bookTicker of the derived book on its default path (/public/stream)', async () => {
    const socket = ws!
    const urls: string[] = []
    const events: { e?: string; s?: string; U?: number; u?: number; pu?: number; b?: unknown; a?: unknown; B?: string; A?: string }[] = []
    socket.on('open', (event) => urls.push(String((event as { ws?: { url?: string } }).ws?.url)))
    socket.on('message', (message) => events.push(message as (typeof events)[number]))
    await socket.subscribePartialBookDepths('BTCUSDT', 5, 100, 'usdm')
    await socket.subscribeSymbolBookTicker('BTCUSDT', 'usdm')
    const depth = await poll('two depth updates', 10_000, () => {
      const updates = events.filter((m) => m.e === 'depthUpdate')
      return updates.length >= 2 ? updates : undefined
    })
    for (const update of depth) {
      const bids = update.b as [string, string][]
      const asks = update.a as [string, string][]
      assert.deepEqual([update.s, bids.length, asks.length], ['BTCUSDT', 5, 5])
      assert.ok(Math.abs(Number(asks[0]![0]) - Number(bids[0]![0]) - 0.1) < 1e-6)
    }
    assert.equal(depth[1]!.pu, depth[0]!.u, 'pu is the previous update id')
    assert.equal(depth[1]!.U, depth[0]!.u! + 1)
    const top = await poll('a bookTicker', 10_000, () => events.find((m) => m.e === 'bookTicker'))
    assert.ok(Number(top.B) > 0 && Number(top.A) > 0)
    assert.deepEqual(urls, [`${replay.wsUrl}/public/stream`])
  })

  it('reads the futures balance', async () => {
    const balances = await client.getBalance()
    assert.equal(balances.find((b) => b.asset === 'USDT')?.balance, '1234.50000000')
  })
})
