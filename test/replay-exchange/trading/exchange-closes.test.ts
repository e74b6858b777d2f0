import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { bracketsFor } from '../../../src/market/leverage-brackets.js'
import { liquidationPrice } from '../../../src/binance-formats/margin.js'
import { openUserStream, startTradingExchange, type TradingExchange } from './support.js'

describe('replay exchange trading: the liquidation and auto-deleverage control', () => {
  let t: TradingExchange
  before(async () => {
    t = await startTradingExchange()
  })
  after(() => t.close())

  const liquidate = (apiKey: string, body: Record<string, unknown>) =>
    fetch(`${t.exchange.url}/__replay/accounts/${apiKey}/liquidate`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

  it('liquidates an isolated position: NEW then CALCULATED under autoclose-<time>, taker fee, the rest of the margin to the insurance fund', async () => {
    const keys = await t.account()
    assert.equal((await t.call(keys, 'POST', '/fapi/v1/marginType', { symbol: 'BTCUSDT', marginType: 'ISOLATED' })).status, 200)
    assert.equal((await t.call(keys, 'POST', '/fapi/v1/leverage', { symbol: 'BTCUSDT', leverage: 10 })).status, 200)
    const stream = await openUserStream(t, keys)
    try {
      const opened = await t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.010', newOrderRespType: 'RESULT' })
      assert.equal(opened.status, 200, JSON.stringify(opened.body))
      const before = Number((await t.call(keys, 'GET', '/fapi/v2/balance')).body.find((b: { asset: string }) => b.asset === 'USDT').balance)
      // The position's liquidation price uses BTCUSDT's own tiers (the snapshot), with the engine's formula.
      const [risk] = (await t.call(keys, 'GET', '/fapi/v2/positionRisk', { symbol: 'BTCUSDT' })).body
      const entry = Number(risk.entryPrice)
      const expectedLiq = liquidationPrice(1, 0.01, entry, Number(risk.isolatedWallet), bracketsFor('BTCUSDT').brackets)
      assert.ok(Math.abs(Number(risk.liquidationPrice) - expectedLiq) < 0.01, `${risk.liquidationPrice} against ${expectedLiq}`)

      const res = await liquidate(keys.apiKey, { symbol: 'BTCUSDT', price: '95000' })
      assert.equal(res.status, 200)
      const order = (await res.json()) as { orderId: number; clientOrderId: string; side: string; status: string }
      assert.match(order.clientOrderId, /^autoclose-\d+$/)
      assert.deepEqual([order.side, order.status], ['SELL', 'FILLED'])
      const fill = await stream.next('the CALCULATED fill', (e) => e.e === 'ORDER_TRADE_UPDATE' && e.o.i === order.orderId && e.o.x === 'CALCULATED')
      const first = stream.events.find((e) => e.e === 'ORDER_TRADE_UPDATE' && e.o.i === order.orderId)
      assert.equal(first.o.x, 'NEW', 'NEW comes first, as Binance shows a liquidation')
      assert.deepEqual([fill.o.c, fill.o.X, fill.o.l, fill.o.L, fill.o.N, fill.o.R], [order.clientOrderId, 'FILLED', '0.010', '95000.00', 'USDT', true])
      const [trade] = (await t.call(keys, 'GET', '/fapi/v1/userTrades', { symbol: 'BTCUSDT', orderId: order.orderId })).body
      assert.equal(Number(trade.commission), Number((0.01 * 95000 * 0.0005).toFixed(8)))
      assert.equal(fill.o.n, trade.commission)
      assert.equal(fill.o.t, trade.id)
      assert.equal(Number((await t.call(keys, 'GET', '/fapi/v2/positionRisk', { symbol: 'BTCUSDT' })).body[0].positionAmt), 0)
      // The whole isolated margin is lost: the wallet falls by exactly it (the fee and the loss come out of it).
      const income = (await t.call(keys, 'GET', '/fapi/v1/income', { symbol: 'BTCUSDT' })).body as { incomeType: string; income: string }[]
      assert.ok(income.some((i) => i.incomeType === 'INSURANCE_CLEAR'))
      const afterBalance = Number((await t.call(keys, 'GET', '/fapi/v2/balance')).body.find((b: { asset: string }) => b.asset === 'USDT').balance)
      assert.ok(Math.abs(before - afterBalance - Number(risk.isolatedWallet)) < 1e-6, `lost ${before - afterBalance}, the margin was ${risk.isolatedWallet}`)
    } finally {
      stream.close()
    }
  })

  it('auto-deleverages part of a cross short, then the rest: adl_autoclose, execution TRADE, no fee', async () => {
    const keys = await t.account()
    const stream = await openUserStream(t, keys)
    try {
      assert.equal((await t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'ETHUSDT', side: 'SELL', type: 'MARKET', quantity: '0.100' })).status, 200)
      const part = (await (await liquidate(keys.apiKey, { symbol: 'ETHUSDT', kind: 'adl', qty: '0.04' })).json()) as { orderId: number; clientOrderId: string; side: string }
      assert.deepEqual([part.clientOrderId, part.side], ['adl_autoclose', 'BUY'])
      assert.equal(Number((await t.call(keys, 'GET', '/fapi/v2/positionRisk', { symbol: 'ETHUSDT' })).body[0].positionAmt), -0.06)
      const rest = (await (await liquidate(keys.apiKey, { symbol: 'ETHUSDT', kind: 'adl' })).json()) as { orderId: number }
      assert.notEqual(rest.orderId, part.orderId, 'each ADL is an order of its own id; the client id repeats')
      const fills = await stream.next('the second TRADE', (e) => e.e === 'ORDER_TRADE_UPDATE' && e.o.i === rest.orderId && e.o.x === 'TRADE')
      assert.deepEqual([fills.o.c, fills.o.l, fills.o.n], ['adl_autoclose', '0.060', undefined])
      const trades = (await t.call(keys, 'GET', '/fapi/v1/userTrades', { symbol: 'ETHUSDT' })).body as { orderId: number; commission: string }[]
      assert.deepEqual(trades.filter((x) => x.orderId === part.orderId || x.orderId === rest.orderId).map((x) => Number(x.commission)), [0, 0])
      assert.equal(Number((await t.call(keys, 'GET', '/fapi/v2/positionRisk', { symbol: 'ETHUSDT' })).body[0].positionAmt), 0)
    } finally {
      stream.close()
    }
  })

  it('refuses what it cannot do, naming the problem, and changes nothing', async () => {
    const keys = await t.account()
    assert.equal((await liquidate('nobody', { symbol: 'BTCUSDT' })).status, 404)
    const flat = await liquidate(keys.apiKey, { symbol: 'BTCUSDT' })
    assert.equal(flat.status, 400)
    assert.match(((await flat.json()) as { error: string }).error, /holds no BTCUSDT position/)
    assert.equal((await t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.002' })).status, 200)
    for (const [body, problem] of [
      [{ symbol: 'BTCUSDT', qty: '0.003' }, /at most the position's 0.002/],
      [{ symbol: 'BTCUSDT', kind: 'margin-call' }, /kind must be liquidation or adl/],
      [{ symbol: 'NOSUCH' }, /no symbol NOSUCH/],
      [{}, /symbol is required/],
    ] as const) {
      const res = await liquidate(keys.apiKey, body)
      assert.equal(res.status, 400)
      assert.match(((await res.json()) as { error: string }).error, problem)
    }
    assert.equal(Number((await t.call(keys, 'GET', '/fapi/v2/positionRisk', { symbol: 'BTCUSDT' })).body[0].positionAmt), 0.002)
  })
})
