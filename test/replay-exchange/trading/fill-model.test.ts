import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BINANCE_BTCUSDT_BRACKETS } from '../../../src/binance-formats/leverage-brackets.js'
import { liquidationPrice } from '../../../src/binance-formats/margin.js'
import { HOUR, MINUTE, readBars, readCsv } from '../support.js'
import { startTradingExchange, type TradingExchange } from './support.js'

const near = (actual: number, expected: number, tolerance: number, what: string) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} is not ${expected} (± ${tolerance})`)

describe('replay exchange trading: the fill model', () => {
  let t: TradingExchange
  before(async () => {
    t = await startTradingExchange()
  })
  after(() => t.close())

  it('fills a MARKET order at once at the last trade price as taker: fee, position, wallet and unrealized PnL as the model gives', async () => {
    const keys = await t.account({ USDT: '10000' })
    const ticker = (await t.get<{ lastPrice: string }>('/fapi/v1/ticker/24hr?symbol=BTCUSDT')).body
    const price = Number(ticker.lastPrice)
    const res = await t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.010', newOrderRespType: 'RESULT' })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.status, 'FILLED')
    assert.equal(Number(res.body.avgPrice), price)
    assert.equal(res.body.executedQty, '0.010')
    const fee = Math.round(0.01 * price * 0.0005 * 1e8) / 1e8
    const trades = (await t.call(keys, 'GET', '/fapi/v1/userTrades', { symbol: 'BTCUSDT' })).body
    assert.equal(trades.length, 1)
    assert.deepEqual([trades[0].price, trades[0].qty, trades[0].maker, trades[0].buyer, trades[0].commissionAsset], [ticker.lastPrice, '0.010', false, true, 'USDT'])
    assert.equal(Number(trades[0].commission), fee)
    assert.equal(trades[0].realizedPnl, '0.00000000')

    const mark = Number((await t.get<{ markPrice: string }>('/fapi/v1/premiumIndex?symbol=BTCUSDT')).body.markPrice)
    const [position] = (await t.call(keys, 'GET', '/fapi/v2/positionRisk', { symbol: 'BTCUSDT' })).body
    assert.equal(position.positionAmt, '0.010')
    assert.equal(Number(position.entryPrice), price)
    near(Number(position.unRealizedProfit), 0.01 * (mark - price), 1e-6, 'unrealized PnL')
    assert.equal(position.leverage, '20')
    assert.equal(position.marginType, 'cross')
    const balance = (await t.call(keys, 'GET', '/fapi/v2/balance')).body.find((b: { asset: string }) => b.asset === 'USDT')
    assert.equal(Number(balance.balance), 10000 - fee)
    near(Number(balance.availableBalance), 10000 - fee + 0.01 * (mark - price) - (0.01 * mark) / 20, 1e-6, 'available balance')

    // Closing realizes (exit − entry) × qty; both fees are gone from the wallet.
    const close = await t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: '0.010', reduceOnly: 'true' })
    assert.equal(close.status, 200)
    const income = (await t.call(keys, 'GET', '/fapi/v1/income', { symbol: 'BTCUSDT' })).body as { incomeType: string; income: string }[]
    assert.deepEqual(income.map((r) => r.incomeType), ['COMMISSION', 'COMMISSION'], 'same price, no PnL row')
    const wallet = Number((await t.call(keys, 'GET', '/fapi/v2/account')).body.totalWalletBalance)
    assert.equal(wallet, Math.round((10000 - 2 * fee) * 1e8) / 1e8)
  })

  it('rests a LIMIT below the price and fills it as maker at its price once the replay path reaches it', async () => {
    const keys = await t.account()
    const now = await t.replayNow()
    // The recorded minutes ahead, read independently: the path passes through every bar's low.
    const ahead = readBars('BTCUSDT-1m-20250504-20250624.csv.gz').filter((b) => b.time >= now + MINUTE && b.time < now + 30 * MINUTE)
    const target = Math.ceil(Math.min(...ahead.map((b) => b.low)) * 10) / 10
    const res = await t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity: '0.005', price: target.toFixed(1) })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.status, 'NEW')
    assert.equal((await t.call(keys, 'GET', '/fapi/v1/openOrders', { symbol: 'BTCUSDT' })).body.length, 1)
    t.clock.advance(31 * MINUTE)
    const order = (await t.call(keys, 'GET', '/fapi/v1/order', { symbol: 'BTCUSDT', orderId: res.body.orderId })).body
    assert.equal(order.status, 'FILLED')
    assert.equal(Number(order.avgPrice), target)
    const [trade] = (await t.call(keys, 'GET', '/fapi/v1/userTrades', { symbol: 'BTCUSDT' })).body
    assert.equal(trade.maker, true)
    assert.equal(Number(trade.commission), Math.round(0.005 * target * 0.0002 * 1e8) / 1e8)
    assert.ok(trade.time > now && trade.time <= now + 31 * MINUTE, 'filled in replay time, when the path got there')
    assert.deepEqual((await t.call(keys, 'GET', '/fapi/v1/openOrders', { symbol: 'BTCUSDT' })).body, [])
  })

  it('settles funding at the recorded funding time: qty × recorded mark × recorded rate', async () => {
    const keys = await t.account()
    assert.equal((await t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: '0.010' })).status, 200)
    const now = await t.replayNow()
    const row = readCsv('BTCUSDT-fundingRate-20190910-20260517.csv').find((r) => Number(r.fundingTime) > now)!
    t.clock.advance(Number(row.fundingTime) - now + MINUTE)
    const income = (await t.call(keys, 'GET', '/fapi/v1/income', { incomeType: 'FUNDING_FEE' })).body
    assert.equal(income.length, 1)
    // A short receives a positive rate: +0.01 × mark × rate.
    const expected = Math.round(0.01 * Number(row.markPrice) * Number(row.fundingRate) * 1e8) / 1e8
    assert.equal(Number(income[0].income), expected)
    assert.equal(income[0].time, Number(row.fundingTime))
  })

  it("liquidates an isolated position at the engine's liquidation price", async () => {
    const keys = await t.account({ USDT: '1000' })
    assert.equal((await t.call(keys, 'POST', '/fapi/v1/marginType', { symbol: 'BTCUSDT', marginType: 'ISOLATED' })).status, 200)
    assert.equal((await t.call(keys, 'POST', '/fapi/v1/leverage', { symbol: 'BTCUSDT', leverage: 125 })).body.leverage, 125)
    const now = await t.replayNow()
    const price = Number((await t.get<{ lastPrice: string }>('/fapi/v1/ticker/24hr?symbol=BTCUSDT')).body.lastPrice)
    // Which way the recorded market breaks 0.5 % first decides the side that gets liquidated.
    const bars = readBars('BTCUSDT-1m-20250504-20250624.csv.gz').filter((b) => b.time >= now && b.time < now + 24 * HOUR)
    const firstDown = bars.findIndex((b) => b.low < price * 0.995)
    const firstUp = bars.findIndex((b) => b.high > price * 1.005)
    const long = firstDown >= 0 && (firstUp < 0 || firstDown < firstUp)
    const res = await t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: long ? 'BUY' : 'SELL', type: 'MARKET', quantity: '0.010', newOrderRespType: 'RESULT' })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    const [position] = (await t.call(keys, 'GET', '/fapi/v2/positionRisk', { symbol: 'BTCUSDT' })).body
    const isolatedWallet = Number(position.isolatedWallet)
    assert.equal(isolatedWallet, Math.round(((0.01 * price) / 125) * 1e8) / 1e8)
    const expected = liquidationPrice(long ? 1 : -1, 0.01, price, isolatedWallet, BINANCE_BTCUSDT_BRACKETS)
    near(Number(position.liquidationPrice), expected, 1e-6, 'liquidation price')
    t.clock.advance(24 * HOUR)
    const [after] = (await t.call(keys, 'GET', '/fapi/v2/positionRisk', { symbol: 'BTCUSDT' })).body
    assert.equal(after.positionAmt, '0.000')
    const trades = (await t.call(keys, 'GET', '/fapi/v1/userTrades', { symbol: 'BTCUSDT' })).body
    assert.equal(trades.length, 2)
    assert.equal(Number(trades[1].price), Math.round(expected * 10) / 10)
    const income = (await t.call(keys, 'GET', '/fapi/v1/income', { symbol: 'BTCUSDT', incomeType: 'INSURANCE_CLEAR' })).body
    assert.equal(income.length, 1)
    const wallet = Number((await t.call(keys, 'GET', '/fapi/v2/account')).body.totalWalletBalance)
    const fee = Math.round(0.01 * price * 0.0005 * 1e8) / 1e8
    near(wallet, 1000 - fee - isolatedWallet, 1e-6, 'the whole isolated margin is lost')
  })
})
