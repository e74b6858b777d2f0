import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { USDMClient, WebsocketClient } from 'binance'
import { type ReplayExchange, startReplayExchange } from '../../../src/replay-exchange/index.js'
import { poll } from '../support.js'
import { binanceusdm, type Ccxt, unrefIntervalsFromNow, usdmClient, usdmWebsocket } from './clients.js'

const CCXT = { apiKey: 'ccxtAlgoKey', secretKey: 'ccxtAlgoSecret' }
const PACKAGE = { apiKey: 'packageAlgoKey', secretKey: 'packageAlgoSecret' }
const BTC = 'BTC/USDT:USDT'

/** Real clients, unchanged but for their base URLs, place, list and cancel conditional orders on the replay's algo service. */
describe('real clients and the replay algo service', () => {
  let replay: ReplayExchange
  let lastPrice: number
  before(async () => {
    replay = await startReplayExchange({ accounts: [{ ...CCXT, balances: { USDT: '10000' } }, { ...PACKAGE, balances: { USDT: '10000' } }] })
    lastPrice = Number(((await (await fetch(`${replay.url}/fapi/v1/ticker/price?symbol=BTCUSDT`)).json()) as { price: string }).price)
  })
  after(() => replay.close())

  describe('ccxt binanceusdm', () => {
    let exchange: Ccxt
    before(async () => {
      exchange = await binanceusdm(replay, CCXT)
      await exchange.loadMarkets()
    })
    after(() => exchange.close())

    it('createOrder with stopLossPrice / takeProfitPrice / triggerPrice / trailingPercent goes to /fapi/v1/algoOrder; fetchOpenOrders and cancelOrder with trigger: true', async () => {
      await exchange.createOrder(BTC, 'market', 'buy', 0.01)
      const stop = await exchange.createOrder(BTC, 'market', 'sell', 0.01, undefined, { stopLossPrice: Math.round(lastPrice * 0.9), reduceOnly: true })
      const target = await exchange.createOrder(BTC, 'market', 'sell', 0.01, undefined, { takeProfitPrice: Math.round(lastPrice * 1.1), reduceOnly: true })
      const trigger = await exchange.createOrder(BTC, 'market', 'buy', 0.01, undefined, { triggerPrice: Math.round(lastPrice * 1.2) })
      const trailing = await exchange.createOrder(BTC, 'market', 'sell', 0.01, undefined, { trailingPercent: 1, reduceOnly: true })
      assert.deepEqual([stop.info.orderType, target.info.orderType, trigger.info.orderType, trailing.info.orderType], ['STOP_MARKET', 'TAKE_PROFIT_MARKET', 'STOP_MARKET', 'TRAILING_STOP_MARKET'])
      assert.ok(stop.id && stop.info.algoId !== undefined, 'ccxt reads the algo answer')
      assert.equal(Number(stop.info.triggerPrice), Math.round(lastPrice * 0.9))
      assert.deepEqual(await exchange.fetchOpenOrders(BTC), [], 'plain open orders hold none of them')
      const open = await exchange.fetchOpenOrders(BTC, undefined, undefined, { trigger: true })
      assert.deepEqual(open.map((o) => o.id).sort(), [stop.id, target.id, trigger.id, trailing.id].sort())
      await exchange.cancelOrder(stop.id!, BTC, { trigger: true })
      const left = await exchange.fetchOpenOrders(BTC, undefined, undefined, { trigger: true })
      assert.deepEqual(left.map((o) => o.id).sort(), [target.id, trigger.id, trailing.id].sort())
      const fetched = await exchange.fetchOrder(stop.id!, BTC, { trigger: true })
      assert.equal(fetched.info.algoStatus, 'CANCELED')
    })
  })

  describe('the binance package', () => {
    let client: USDMClient
    let ws: WebsocketClient
    let restore: () => void
    const events: { e: string; o?: { aid: number; X: string; caid: string } }[] = []
    before(async () => {
      restore = unrefIntervalsFromNow()
      client = usdmClient(replay, PACKAGE)
      await client.syncTime()
      ws = usdmWebsocket(replay, PACKAGE)
      ws.on('message', (message) => events.push(message as unknown as (typeof events)[number]))
      await ws.subscribeUsdFuturesUserDataStream()
      // The stream delivers once a zero deposit's ACCOUNT_UPDATE comes through.
      await poll('the user stream', 10_000, () => {
        replay.accounts.fund(PACKAGE.apiKey, 'USDT', 0)
        return events.some((e) => e.e === 'ACCOUNT_UPDATE') || undefined
      })
    })
    after(async () => {
      await ws.unsubscribeUsdFuturesUserDataStream()
      ws.closeAll(true)
      restore()
    })

    it('submitNewAlgoOrder, getAlgoOrder, getOpenAlgoOrders, cancelAlgoOrder, cancelAllAlgoOpenOrders, and ALGO_UPDATE on the WebSocket', async () => {
      const placed = await client.submitNewAlgoOrder({ algoType: 'CONDITIONAL', symbol: 'BTCUSDT', side: 'BUY', type: 'STOP_MARKET', triggerPrice: String(Math.round(lastPrice * 1.2)), quantity: '0.010', clientAlgoId: 'pkg-1' })
      assert.deepEqual([placed.clientAlgoId, placed.algoStatus, placed.orderType], ['pkg-1', 'NEW', 'STOP_MARKET'])
      const second = await client.submitNewAlgoOrder({ algoType: 'CONDITIONAL', symbol: 'BTCUSDT', side: 'BUY', type: 'TAKE_PROFIT_MARKET', triggerPrice: String(Math.round(lastPrice * 0.8)), quantity: '0.010' })
      assert.equal((await client.getAlgoOrder({ algoId: placed.algoId })).actualOrderId, '')
      assert.deepEqual((await client.getOpenAlgoOrders({ symbol: 'BTCUSDT' })).map((o) => o.algoId).sort(), [placed.algoId, second.algoId].sort())
      const canceled = await client.cancelAlgoOrder({ clientAlgoId: 'pkg-1' })
      assert.equal(canceled.algoId, placed.algoId)
      assert.equal((await client.cancelAllAlgoOpenOrders({ symbol: 'BTCUSDT' })).code, 200)
      assert.deepEqual(await client.getOpenAlgoOrders(), [])
      assert.deepEqual((await client.getAllAlgoOrders({ symbol: 'BTCUSDT' })).map((o) => o.algoStatus), ['CANCELED', 'CANCELED'])
      await poll('ALGO_UPDATE NEW and CANCELED of both', 10_000, () => events.filter((e) => e.e === 'ALGO_UPDATE').length >= 4 || undefined)
      const mine = events.filter((e) => e.e === 'ALGO_UPDATE' && e.o!.aid === placed.algoId).map((e) => e.o!.X)
      assert.deepEqual(mine, ['NEW', 'CANCELED'])
    })
  })
})
