import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { USDMClient, WebsocketClient } from 'binance'
import { bracketsFor } from '../../../src/market/leverage-brackets.js'
import { type ReplayExchange, startReplayExchange } from '../../../src/replay-exchange/index.js'
import { poll } from '../support.js'
import { marketFillPrice, rejection, round8, takerFee, unrefIntervalsFromNow, usdmClient, usdmWebsocket } from './clients.js'

const TRADER = { apiKey: 'binancePackageTraderKey', secretKey: 'binancePackageTraderSecret' }
const QTY = 0.01

/** A user-data event as the package's WebsocketClient emits it on 'message' (Binance's JSON plus its own tags). */
interface UserEvent {
  e: string
  E: number
  listenKey?: string
  o?: { i: number; c: string; x: string; X: string; L: string; l: string; n: string; N: string; rp: string; t: number; m: boolean; ap: string }
  a?: { m: string; B: { a: string; wb: string; cw: string }[]; P: { s: string; pa: string; ep: string; mt: string }[] }
}

/**
 * The `binance` package's USDMClient and WebsocketClient trading on the replay exchange, with only
 * their base URLs moved and time sync on: REST orders and account views, the user data stream on
 * the package's default path (/private/stream), and every trading fault seen through the client.
 */
describe('the binance package trading on the replay exchange', () => {
  let replay: ReplayExchange
  let client: USDMClient
  let ws: WebsocketClient
  const events: UserEvent[] = []
  const opened: string[] = []
  let restoreIntervals: () => void

  before(async () => {
    restoreIntervals = unrefIntervalsFromNow()
    replay = await startReplayExchange({ accounts: [{ ...TRADER, balances: { USDT: '10000' } }] })
    client = usdmClient(replay, TRADER)
    await client.syncTime()
    ws = usdmWebsocket(replay, TRADER)
    ws.on('message', (message) => events.push(message as unknown as UserEvent))
    // 'open' for the first connection, 'reconnected' for every later one.
    for (const name of ['open', 'reconnected'] as const) ws.on(name, (event) => opened.push(String((event as { ws?: { url?: string } }).ws?.url)))
    await ws.subscribeUsdFuturesUserDataStream()
    await userStreamReady()
  })
  after(async () => {
    replay.faults.clear()
    await ws.unsubscribeUsdFuturesUserDataStream()
    ws.closeAll(true)
    await replay.close()
    restoreIntervals()
  })

  const wallet = async () => Number((await client.getBalanceV3()).find((b) => b.asset === 'USDT')!.balance)
  const updates = (orderId: number) => events.filter((e) => e.e === 'ORDER_TRADE_UPDATE' && e.o!.i === orderId)
  const deposits = () => events.filter((e) => e.e === 'ACCOUNT_UPDATE' && e.a!.m === 'DEPOSIT').length

  /** Waits until the stream delivers: a zero deposit (the control route) sends an ACCOUNT_UPDATE DEPOSIT. */
  async function userStreamReady(): Promise<void> {
    await poll('the user stream to deliver', 10_000, () => {
      const seen = deposits()
      replay.accounts.fund(TRADER.apiKey, 'USDT', 0)
      return poll('a DEPOSIT update', 300, () => (deposits() > seen ? true : undefined)).catch(() => undefined)
    })
  }

  it('reads leverage brackets (a list of one with symbol, as the live API answers), sets leverage and margin type, reads the symbol config', async () => {
    const brackets = await client.getNotionalAndLeverageBrackets({ symbol: 'BTCUSDT' })
    assert.equal(brackets.length, 1)
    assert.deepEqual(
      brackets[0]!.brackets.map((b) => [b.notionalFloor, b.notionalCap, b.maintMarginRatio, b.initialLeverage, b.cum]),
      // BTCUSDT's own tiers (the 2024-10-24 snapshot, 12 tiers), as the account's answer.
      bracketsFor('BTCUSDT').brackets.map((b) => [b.notionalFloor, b.notionalCap, b.maintMarginRatio, b.initialLeverage, b.cum]),
    )
    assert.deepEqual(await client.setLeverage({ symbol: 'BTCUSDT', leverage: 5 }), { leverage: 5, maxNotionalValue: '480000000', symbol: 'BTCUSDT' })
    assert.deepEqual(await client.setMarginType({ symbol: 'ETHUSDT', marginType: 'ISOLATED' }), { code: 200, msg: 'success' })
    const again = await rejection(client.setMarginType({ symbol: 'ETHUSDT', marginType: 'ISOLATED' }))
    assert.deepEqual(again.body, { code: -4046, msg: 'No need to change margin type.' })
    const config = await client.getFuturesSymbolConfig({ symbol: 'BTCUSDT' })
    assert.deepEqual(config, [{ symbol: 'BTCUSDT', marginType: 'CROSSED', isAutoAddMargin: 'false', leverage: 5, maxNotionalValue: '480000000' }])
    assert.equal((await client.getFuturesSymbolConfig({ symbol: 'ETHUSDT' }))[0]!.marginType, 'ISOLATED')
    assert.equal((await client.getFuturesAccountConfig()).dualSidePosition, false)
    const leverageTooHigh = await rejection(client.setLeverage({ symbol: 'BTCUSDT', leverage: 126 }))
    assert.deepEqual(leverageTooHigh.body, { code: -4028, msg: 'Leverage 126 is not valid' })
  })

  it('fills market orders at the fill model price with a 5 bps fee, and streams an ORDER_TRADE_UPDATE and an ACCOUNT_UPDATE for every fill', async () => {
    const before = await wallet()
    const buy = await client.submitNewOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: QTY, newOrderRespType: 'RESULT' })
    const price = await marketFillPrice(replay, 'BTCUSDT', buy.updateTime)
    const fee = takerFee(QTY, price)
    assert.deepEqual([buy.status, buy.executedQty, Number(buy.avgPrice), Number(buy.cumQuote)], ['FILLED', '0.010', price, round8(QTY * price)])
    const [trade] = await client.getAccountTrades({ symbol: 'BTCUSDT', orderId: buy.orderId })
    assert.deepEqual([Number(trade!.price), Number(trade!.commission), trade!.commissionAsset, trade!.maker, trade!.buyer], [price, fee, 'USDT', false, true])
    assert.equal(await wallet(), round8(before - fee))

    const [position] = await client.getPositionsV3({ symbol: 'BTCUSDT' })
    assert.deepEqual([position!.positionAmt, Number(position!.entryPrice)], ['0.010', price])
    const mark = Number(position!.markPrice)
    assert.ok(Math.abs(Number(position!.unRealizedProfit) - QTY * (mark - price)) < 1e-8, `${position!.unRealizedProfit} at mark ${mark}`)
    assert.ok(Math.abs(Number(position!.positionInitialMargin) - (QTY * mark) / 5) < 1e-7, 'margin at 5x')
    const account = await client.getAccountInformationV3()
    assert.equal(Number(account.totalWalletBalance), round8(before - fee))

    // The default ACK answer is the order as accepted; the stream carries its fill.
    const sell = await client.submitNewOrder({ symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: QTY, reduceOnly: 'true' })
    assert.deepEqual([sell.status, sell.executedQty], ['NEW', '0.000'])
    const [exit] = await client.getAccountTrades({ symbol: 'BTCUSDT', orderId: sell.orderId })
    const exitPrice = await marketFillPrice(replay, 'BTCUSDT', exit!.time)
    const realized = round8(QTY * (exitPrice - price))
    assert.deepEqual([Number(exit!.price), Number(exit!.realizedPnl)], [exitPrice, realized])
    const after = round8(round8(before - fee + realized) - takerFee(QTY, exitPrice))
    assert.equal(await wallet(), after)

    for (const [order, fillPrice, amount, wb] of [
      [buy, price, QTY, round8(before - fee)],
      [sell, exitPrice, 0, after],
    ] as const) {
      const tradeUpdate = await poll(`the TRADE update of ${order.orderId}`, 5000, () => updates(order.orderId).find((e) => e.o!.x === 'TRADE'))
      assert.deepEqual(
        updates(order.orderId).map((e) => e.o!.x),
        ['NEW', 'TRADE'],
      )
      const o = tradeUpdate.o!
      assert.deepEqual([o.X, o.l, Number(o.L), Number(o.n), o.N, o.m], ['FILLED', '0.010', fillPrice, takerFee(QTY, fillPrice), 'USDT', false])
      const accountUpdate = await poll(`the ACCOUNT_UPDATE of ${order.orderId}`, 5000, () =>
        events.find((e) => e.e === 'ACCOUNT_UPDATE' && e.a!.m === 'ORDER' && e.E === tradeUpdate.E && Number(e.a!.P[0]!.pa) === amount),
      )
      assert.equal(Number(accountUpdate.a!.B[0]!.wb), wb)
    }
    assert.equal(Number(updates(sell.orderId).find((e) => e.o!.x === 'TRADE')!.o!.rp), realized)
    assert.deepEqual(await client.getPositionsV3({ symbol: 'BTCUSDT' }), [])
  })

  it('rests a limit order, lists it open, queries and cancels it by client order id; a second cancel is -2011', async () => {
    const last = Number((await client.getSymbolPriceTicker({ symbol: 'BTCUSDT' })).price)
    const price = Math.round(last * 0.9 * 10) / 10
    const id = client.generateNewOrderId()
    const placed = await client.submitNewOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity: QTY, price, newClientOrderId: id })
    assert.deepEqual([placed.status, Number(placed.price), placed.clientOrderId], ['NEW', price, id])
    const open = await client.getAllOpenOrders({ symbol: 'BTCUSDT' })
    assert.deepEqual(
      open.map((o) => [o.orderId, o.clientOrderId, Number(o.price), o.origQty]),
      [[placed.orderId, id, price, '0.010']],
    )
    assert.equal((await client.getOrder({ symbol: 'BTCUSDT', origClientOrderId: id })).status, 'NEW')
    assert.equal((await client.cancelOrder({ symbol: 'BTCUSDT', origClientOrderId: id })).status, 'CANCELED')
    assert.deepEqual(await client.getAllOpenOrders({ symbol: 'BTCUSDT' }), [])
    await poll('the CANCELED update', 5000, () => updates(placed.orderId).find((e) => e.o!.x === 'CANCELED'))
    const twice = await rejection(client.cancelOrder({ symbol: 'BTCUSDT', origClientOrderId: id }))
    assert.deepEqual(twice.body, { code: -2011, msg: 'Unknown order sent.' })
  })

  it('sees an order executed then answered 503 "Unknown error" or -1007; the order exists when queried by client order id', async () => {
    for (const [fault, side, body] of [
      [503, 'BUY', { code: -1000, msg: 'Unknown error, please check your request or try again later.' }],
      [-1007, 'SELL', { code: -1007, msg: 'Timeout waiting for response from backend server. Send status unknown; execution status unknown.' }],
    ] as const) {
      replay.faults.add({ path: '/fapi/v1/order', executeThen: fault, times: 1 })
      const id = client.generateNewOrderId()
      const error = await rejection(client.submitNewOrder({ symbol: 'BTCUSDT', side, type: 'MARKET', quantity: QTY, newClientOrderId: id }))
      assert.deepEqual(error.body, body)
      const found = await client.getOrder({ symbol: 'BTCUSDT', origClientOrderId: id })
      assert.deepEqual([found.status, found.executedQty, found.side], ['FILLED', '0.010', side])
    }
    assert.deepEqual(await client.getPositionsV3({ symbol: 'BTCUSDT' }), [], 'both executed: flat again')
  })

  it('sees a "forgotten" order: -2013 on query and -2011 on cancel while the fault lasts, then the order again', async () => {
    const price = Math.round(Number((await client.getSymbolPriceTicker({ symbol: 'BTCUSDT' })).price) * 0.9 * 10) / 10
    const placed = await client.submitNewOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity: QTY, price })
    replay.faults.add({ path: '/fapi/v1/order', forget: true, times: 2 })
    assert.deepEqual((await rejection(client.getOrder({ symbol: 'BTCUSDT', orderId: placed.orderId }))).body, { code: -2013, msg: 'Order does not exist.' })
    assert.deepEqual((await rejection(client.cancelOrder({ symbol: 'BTCUSDT', orderId: placed.orderId }))).body, { code: -2011, msg: 'Unknown order sent.' })
    assert.equal((await client.getOrder({ symbol: 'BTCUSDT', orderId: placed.orderId })).status, 'NEW', 'the refused cancel did nothing')
    assert.equal((await client.cancelOrder({ symbol: 'BTCUSDT', orderId: placed.orderId })).status, 'CANCELED')
  })

  it('misses dropped user-stream events and gets delayed ones late', async () => {
    replay.faults.add({ userEvents: 'drop', event: 'ORDER_TRADE_UPDATE', times: 2 })
    const dropped = await client.submitNewOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: QTY })
    replay.faults.add({ userEvents: 'delay', latencyMs: 400, event: 'ORDER_TRADE_UPDATE' })
    const delayed = await client.submitNewOrder({ symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: QTY, reduceOnly: 'true' })
    const answeredAt = Date.now()
    await poll('the delayed TRADE update', 5000, () => updates(delayed.orderId).find((e) => e.o!.x === 'TRADE'))
    assert.ok(Date.now() - answeredAt >= 300, `the update came ${Date.now() - answeredAt} ms after the REST answer`)
    replay.faults.clear()
    // Both updates (NEW, TRADE) of the first order were dropped; its ACCOUNT_UPDATE was not.
    assert.deepEqual(updates(dropped.orderId), [])
    assert.ok(events.some((e) => e.e === 'ACCOUNT_UPDATE' && e.a!.m === 'ORDER' && e.a!.P[0]!.pa === '0.010'))
  })

  it('renews an expired listenKey and reconnects a closed user stream by itself; events flow again', async () => {
    const posts = () => replay.stats().byPath['/fapi/v1/listenKey'] ?? 0
    const before = posts()
    const connections = opened.length
    assert.equal(replay.faults.expireListenKeys(TRADER.apiKey), 1)
    const expired = await poll('listenKeyExpired', 5000, () => events.find((e) => e.e === 'listenKeyExpired'))
    // The package closes the socket on listenKeyExpired, asks for a new key and connects with it.
    await poll('a new listenKey and connection', 10_000, () => (posts() > before && opened.length > connections ? true : undefined))
    assert.ok(!opened[opened.length - 1]!.includes(expired.listenKey!), 'connected with the new key')
    await userStreamReady()
    const order = await client.submitNewOrder({ symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: QTY })
    await poll('a TRADE on the new key', 5000, () => updates(order.orderId).find((e) => e.o!.x === 'TRADE'))

    const reconnects = opened.length
    assert.equal(replay.faults.closeUserStreams(TRADER.apiKey), 1)
    await poll('the package to reconnect', 10_000, () => (opened.length > reconnects ? true : undefined))
    await userStreamReady()
    const exit = await client.submitNewOrder({ symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: QTY, reduceOnly: 'true' })
    await poll('a TRADE after reconnecting', 5000, () => updates(exit.orderId).find((e) => e.o!.x === 'TRADE'))
    assert.ok(opened.every((url) => url.startsWith(`${replay.wsUrl}/private/stream?listenKey=`)), opened.join(', '))
  })
})
