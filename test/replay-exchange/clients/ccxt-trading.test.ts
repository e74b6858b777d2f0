import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { bracketsFor } from '../../../src/market/leverage-brackets.js'
import { type ReplayExchange, startReplayExchange } from '../../../src/replay-exchange/index.js'
import { poll } from '../support.js'
import { binanceusdm, type Ccxt, marketFillPrice, rejection, round8, takerFee, within } from './clients.js'

const TRADER = { apiKey: 'ccxtTraderKey', secretKey: 'ccxtTraderSecret' }
const BTC = 'BTC/USDT:USDT'
const ETH = 'ETH/USDT:USDT'
const QTY = 0.01

/**
 * ccxt's binanceusdm trading on the replay exchange with only its base URLs moved: REST orders and
 * account views, ccxt.pro's user-data watchers, and every trading fault seen through the client.
 * One account; tests run in order and compute what they expect from what the account held before.
 */
describe('ccxt binanceusdm trading on the replay exchange', () => {
  let replay: ReplayExchange
  let exchange: Ccxt

  before(async () => {
    replay = await startReplayExchange({ accounts: [{ ...TRADER, balances: { USDT: '10000' } }] })
    exchange = await binanceusdm(replay, TRADER)
    await exchange.loadMarkets()
  })
  after(async () => {
    replay.faults.clear()
    await exchange.close()
    await replay.close()
  })

  /** The USDT wallet balance (ccxt's `total` is the margin balance, which includes unrealized PnL). */
  const usdt = async () => Number((await exchange.fetchBalance()).info.assets.find((a: { asset: string }) => a.asset === 'USDT').walletBalance)
  // A watcher's first answer holds everything ccxt cached before it, so tests find their update by id.
  const byOrder = <T extends { order?: string }>(updates: T[], orderId: string) => updates.find((u) => u.order === orderId)
  const tradeOf = async (orderId: string) => (await exchange.fetchMyTrades(BTC, undefined, 100)).filter((t) => t.order === orderId)

  /**
   * Waits until ccxt's user stream delivers: a zero deposit (the control route) sends an
   * ACCOUNT_UPDATE, which resolves watchBalance once the socket is attached on the exchange.
   */
  async function userStreamReady(): Promise<void> {
    await poll('the user stream to deliver', 10_000, async () => {
      const pending = exchange.watchBalance()
      replay.accounts.fund(TRADER.apiKey, 'USDT', 0)
      return within('a DEPOSIT update', 500, pending).then(
        () => true,
        () => undefined,
      )
    })
  }

  it('reads leverage brackets, sets leverage and margin mode, and reads them back', async () => {
    const tiers = (await exchange.fetchLeverageTiers([BTC]))[BTC]!
    assert.deepEqual(
      tiers.map((t) => [t.minNotional, t.maxNotional, t.maintenanceMarginRate, t.maxLeverage]),
      // BTCUSDT's own tiers (the 2024-10-24 snapshot, 12 tiers), as the account's answer.
      bracketsFor('BTCUSDT').brackets.map((b) => [b.notionalFloor, b.notionalCap, b.maintMarginRatio, b.initialLeverage]),
    )
    const before = await exchange.fetchLeverage(BTC)
    assert.deepEqual([before.longLeverage, before.marginMode], [20, 'cross'], "Binance's defaults for a new account")
    assert.equal((await exchange.setLeverage(10, BTC)).leverage, 10)
    await exchange.setMarginMode('isolated', ETH)
    const btc = await exchange.fetchLeverage(BTC)
    const eth = await exchange.fetchLeverage(ETH)
    assert.deepEqual([btc.longLeverage, btc.marginMode, eth.longLeverage, eth.marginMode], [10, 'cross', 20, 'isolated'])
    // -4046 "No need to change margin type." reaches the client as Binance's code and message.
    const again = await rejection(exchange.setMarginMode('isolated', ETH))
    assert.match(again.message, /-4046.*No need to change margin type\./)
  })

  it('fills a market order at the fill model price with a 5 bps fee; position, balance and PnL follow, on REST and the user stream', async () => {
    await exchange.watchPositions([BTC]) // the first call answers ccxt's REST snapshot
    await userStreamReady()
    const wallet = await usdt()
    const trades = exchange.watchMyTrades(BTC)
    const balance = exchange.watchBalance()
    const positions = exchange.watchPositions([BTC])

    const order = await exchange.createOrder(BTC, 'market', 'buy', QTY)
    const [trade] = await tradeOf(order.id!)
    const price = await marketFillPrice(replay, 'BTCUSDT', trade!.timestamp!)
    const fee = takerFee(QTY, price)
    assert.deepEqual([order.status, order.filled, order.average], ['closed', QTY, price])
    assert.deepEqual([trade!.price, trade!.amount, trade!.takerOrMaker, trade!.fee!.cost, trade!.fee!.currency], [price, QTY, 'taker', fee, 'USDT'])
    assert.equal(await usdt(), round8(wallet - fee))

    // ORDER_TRADE_UPDATE (TRADE) and ACCOUNT_UPDATE of the fill, as ccxt.pro reads them.
    const streamed = byOrder(await within('the TRADE update', 5000, trades), order.id!)
    assert.deepEqual([streamed!.id, streamed!.order, streamed!.price, streamed!.amount, streamed!.fee!.cost], [trade!.id, order.id, price, QTY, fee])
    assert.equal((await within('the ACCOUNT_UPDATE balance', 5000, balance))['USDT']!.total, round8(wallet - fee))
    const [position] = await within('the ACCOUNT_UPDATE position', 5000, positions)
    assert.deepEqual([position!.symbol, position!.contracts, position!.entryPrice, position!.side], [BTC, QTY, price, 'long'])
    const cached = await poll('ccxt.pro order cache: FILLED', 5000, () => exchange.orders?.find((o) => o.id === order.id && o.status === 'closed'))
    assert.equal(cached.filled, QTY)

    const [rest] = await exchange.fetchPositions([BTC])
    assert.deepEqual([rest!.contracts, rest!.entryPrice, rest!.side, rest!.marginMode], [QTY, price, 'long', 'cross'])
    assert.ok(Math.abs(rest!.unrealizedPnl! - QTY * (rest!.markPrice! - price)) < 1e-8, `${rest!.unrealizedPnl} at mark ${rest!.markPrice}`)
    assert.ok(Math.abs(rest!.initialMargin! - (QTY * rest!.markPrice!) / 10) < 1e-7, 'margin at 10x')

    // Closing it realizes (exit − entry) × qty, less the exit's fee, and sends one more pair of events.
    const closeTrades = exchange.watchMyTrades(BTC)
    const closeBalance = exchange.watchBalance()
    const close = await exchange.createOrder(BTC, 'market', 'sell', QTY, undefined, { reduceOnly: true })
    const [exit] = await tradeOf(close.id!)
    const exitPrice = await marketFillPrice(replay, 'BTCUSDT', exit!.timestamp!)
    const realized = round8(QTY * (exitPrice - price))
    assert.deepEqual([exit!.price, Number(exit!.info.realizedPnl), exit!.fee!.cost], [exitPrice, realized, takerFee(QTY, exitPrice)])
    const expected = round8(round8(wallet - fee + realized) - takerFee(QTY, exitPrice))
    assert.equal(byOrder(await within('the closing TRADE', 5000, closeTrades), close.id!)?.id, exit!.id)
    assert.equal((await within('the closing ACCOUNT_UPDATE', 5000, closeBalance))['USDT']!.total, expected)
    assert.equal(await usdt(), expected)
    assert.deepEqual(await exchange.fetchPositions([BTC]), [])
  })

  it('rests a limit order below the market, lists it open, cancels it; a crossing limit fills at the market price as taker', async () => {
    const last = (await exchange.fetchTicker(BTC)).last!
    const low = Math.round(last * 0.9 * 10) / 10
    const streamed = exchange.watchOrders(BTC)
    const resting = await exchange.createOrder(BTC, 'limit', 'buy', QTY, low, { clientOrderId: 'rest-1' })
    assert.deepEqual([resting.status, resting.price, resting.filled, resting.clientOrderId], ['open', low, 0, 'rest-1'])
    const update = (await within('the NEW update', 5000, streamed)).find((o) => o.id === resting.id)
    assert.deepEqual([update!.id, update!.status, update!.price], [resting.id, 'open', low])
    const open = await exchange.fetchOpenOrders(BTC)
    assert.deepEqual(
      open.map((o) => [o.id, o.price, o.remaining]),
      [[resting.id, low, QTY]],
    )
    assert.equal((await exchange.fetchOrder(resting.id!, BTC)).status, 'open')
    const canceledUpdate = exchange.watchOrders(BTC)
    const canceled = await exchange.cancelOrder(resting.id!, BTC)
    assert.equal(canceled.status, 'canceled')
    assert.equal((await within('the CANCELED update', 5000, canceledUpdate)).find((o) => o.id === resting.id)?.status, 'canceled')
    assert.deepEqual(await exchange.fetchOpenOrders(BTC), [])
    // Cancelling it again: -2011 Unknown order sent., which ccxt maps to OrderNotFound.
    const twice = await rejection(exchange.cancelOrder(resting.id!, BTC))
    assert.equal(twice.constructor.name, 'OrderNotFound')

    const high = Math.round(last * 1.05 * 10) / 10
    const crossing = await exchange.createOrder(BTC, 'limit', 'buy', QTY, high)
    const [fill] = await tradeOf(crossing.id!)
    const price = await marketFillPrice(replay, 'BTCUSDT', fill!.timestamp!)
    assert.ok(price < high)
    assert.deepEqual([fill!.price, fill!.takerOrMaker, fill!.fee!.cost], [price, 'taker', takerFee(QTY, price)])
    assert.equal((await exchange.fetchOrder(crossing.id!, BTC)).status, 'closed')
    await exchange.createOrder(BTC, 'market', 'sell', QTY, undefined, { reduceOnly: true })
  })

  it('sees an order executed then answered 503 "Unknown error" or -1007; the order exists when fetched by client order id', async () => {
    replay.faults.add({ path: '/fapi/v1/order', executeThen: 503, times: 1 })
    const unknown = await rejection(exchange.createOrder(BTC, 'market', 'buy', QTY, undefined, { clientOrderId: 'amb-503' }))
    assert.match(unknown.message, /Unknown error, please check your request or try again later\./)
    const found = await exchange.fetchOrder('', BTC, { clientOrderId: 'amb-503' })
    assert.deepEqual([found.status, found.filled, found.clientOrderId], ['closed', QTY, 'amb-503'])

    replay.faults.add({ path: '/fapi/v1/order', executeThen: -1007, times: 1 })
    const timeout = await rejection(exchange.createOrder(BTC, 'market', 'sell', QTY, undefined, { clientOrderId: 'amb-1007', reduceOnly: true }))
    assert.match(timeout.message, /-1007.*execution status unknown/)
    assert.equal(timeout.constructor.name, 'RequestTimeout')
    assert.equal((await exchange.fetchOrder('', BTC, { clientOrderId: 'amb-1007' })).status, 'closed')
    assert.deepEqual(await exchange.fetchPositions([BTC]), [], 'both executed: flat again')
  })

  it('sees a "forgotten" order: -2013 on fetch and -2011 on cancel while the fault lasts, then the order again', async () => {
    const low = Math.round((await exchange.fetchTicker(BTC)).last! * 0.9 * 10) / 10
    const order = await exchange.createOrder(BTC, 'limit', 'buy', QTY, low, { clientOrderId: 'forgotten-1' })
    replay.faults.add({ path: '/fapi/v1/order', forget: true, times: 2 })
    assert.equal((await rejection(exchange.fetchOrder(order.id!, BTC))).constructor.name, 'OrderNotFound')
    assert.equal((await rejection(exchange.cancelOrder(order.id!, BTC))).constructor.name, 'OrderNotFound')
    // The refused cancel did nothing: the order is still open and found once the fault has passed.
    assert.equal((await exchange.fetchOrder('', BTC, { clientOrderId: 'forgotten-1' })).status, 'open')
    assert.equal((await exchange.cancelOrder(order.id!, BTC)).status, 'canceled')
  })

  it('misses a dropped ACCOUNT_UPDATE and gets a delayed ORDER_TRADE_UPDATE late', async () => {
    await userStreamReady()
    const wallet = await usdt()
    replay.faults.add({ userEvents: 'drop', event: 'ACCOUNT_UPDATE', times: 1 })
    const balance = exchange.watchBalance()
    const first = await exchange.createOrder(BTC, 'market', 'buy', QTY)
    const second = await exchange.createOrder(BTC, 'market', 'sell', QTY, undefined, { reduceOnly: true })
    const [entry] = await tradeOf(first.id!)
    const [exit] = await tradeOf(second.id!)
    // The first ACCOUNT_UPDATE ccxt sees is the second fill's: the first fill's was dropped.
    const afterFirst = round8(wallet - entry!.fee!.cost!)
    const afterSecond = await usdt()
    assert.notEqual(afterFirst, afterSecond)
    assert.equal((await within('an ACCOUNT_UPDATE', 5000, balance))['USDT']!.total, afterSecond)
    assert.ok(exit)

    replay.faults.add({ userEvents: 'delay', latencyMs: 400, event: 'ORDER_TRADE_UPDATE' })
    const trades = exchange.watchMyTrades(BTC)
    const placed = await exchange.createOrder(BTC, 'market', 'buy', QTY)
    const answeredAt = Date.now()
    assert.ok(byOrder(await within('the delayed TRADE update', 5000, trades), placed.id!))
    assert.ok(Date.now() - answeredAt >= 300, `the update came ${Date.now() - answeredAt} ms after the REST answer`)
    replay.faults.clear()
    await exchange.createOrder(BTC, 'market', 'sell', QTY, undefined, { reduceOnly: true })
  })

  it('reports an expired listenKey when it keeps it alive, and a closed user stream to the pending watcher; a new watch reconnects', async () => {
    await userStreamReady()
    const before = replay.stats().byPath['/fapi/v1/listenKey'] ?? 0
    const pending = exchange.watchMyTrades(BTC)
    const failure = pending.then(
      () => new Error('resolved'),
      (error: Error) => error,
    )
    replay.faults.expireListenKeys(TRADER.apiKey)
    // ccxt's keep-alive timer (every 20 min) is where it learns: PUT answers -1125 and ccxt rejects its watchers.
    await exchange.keepAliveListenKey()
    assert.match((await within('the watcher to fail', 5000, failure)).message, /-1125|listenKey does not exist/)
    await userStreamReady()
    assert.ok((replay.stats().byPath['/fapi/v1/listenKey'] ?? 0) >= before + 2, 'a PUT, then a POST for a new key')
    const trades = exchange.watchMyTrades(BTC)
    const order = await exchange.createOrder(BTC, 'market', 'buy', QTY)
    assert.ok(byOrder(await within('a TRADE on the new key', 5000, trades), order.id!))

    const closed = exchange.watchMyTrades(BTC).then(
      () => new Error('resolved'),
      (error: Error) => error,
    )
    assert.equal(replay.faults.closeUserStreams(TRADER.apiKey), 1)
    assert.equal((await within('the watcher to fail', 5000, closed)).constructor.name, 'NetworkError')
    await userStreamReady()
    const again = exchange.watchMyTrades(BTC)
    const exit = await exchange.createOrder(BTC, 'market', 'sell', QTY, undefined, { reduceOnly: true })
    assert.ok(byOrder(await within('a TRADE after reconnecting', 5000, again), exit.id!))
  })
})
