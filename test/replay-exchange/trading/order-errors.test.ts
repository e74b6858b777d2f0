import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { type Keys, startTradingExchange, type TradingExchange } from './support.js'

describe("replay exchange trading: Binance's filters and errors, each from its cause", () => {
  let t: TradingExchange
  let keys: Keys
  let price: number
  before(async () => {
    t = await startTradingExchange()
    keys = await t.account({ USDT: '10000' })
    price = Number((await t.get<{ lastPrice: string }>('/fapi/v1/ticker/24hr?symbol=BTCUSDT')).body.lastPrice)
  })
  after(() => t.close())

  const order = (params: Record<string, string | number>, account = keys) => t.call(account, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.010', ...params })
  const refused = async (params: Record<string, string | number>, code: number, msg: string | RegExp, status = 400) => {
    const res = await order(params)
    assert.equal(res.status, status, JSON.stringify(res.body))
    assert.equal(res.body.code, code)
    if (typeof msg === 'string') assert.equal(res.body.msg, msg)
    else assert.match(res.body.msg, msg)
  }

  it('refuses conditional types with -4120 and an unknown type with -1116', async () => {
    await refused({ type: 'STOP_MARKET', stopPrice: '1' }, -4120, 'Order type not supported for this endpoint. Please use the Algo Order API endpoints instead.')
    await refused({ type: 'TAKE_PROFIT' }, -4120, /Algo Order API/)
    await refused({ type: 'LIMIT_MAKER' }, -1116, 'Invalid orderType.')
  })

  it('checks precision (-1111), zero quantity (-4003), tick size (-4014), lot bounds (-1013) and min notional (-4164)', async () => {
    await refused({ quantity: '0.0001' }, -1111, 'Precision is over the maximum defined for this asset.')
    await refused({ quantity: '0' }, -4003, 'Quantity less than or equal to zero.')
    await refused({ type: 'LIMIT', timeInForce: 'GTC', price: '1000.055' }, -1111, 'Precision is over the maximum defined for this asset.')
    await refused({ type: 'LIMIT', timeInForce: 'GTC', price: '50000.15', quantity: '0.010' }, -4014, 'Price not increased by tick size.')
    await refused({ quantity: '5000' }, -1013, 'Filter failure: MARKET_LOT_SIZE')
    await refused({ type: 'LIMIT', timeInForce: 'GTC', price: '100.0', quantity: '1' }, -1013, 'Filter failure: PRICE_FILTER')
    await refused({ type: 'LIMIT', timeInForce: 'GTC', price: (Math.floor(price * 0.9 * 10) / 10).toFixed(1), quantity: '0.001' }, -4164, "Order's notional must be no smaller than 100 (unless you choose reduce only).")
  })

  it('refuses what the margin cannot carry with -2019', async () => {
    const poor = await t.account({ USDT: '10' })
    const res = await order({ quantity: '0.010' }, poor)
    assert.equal(res.status, 400)
    assert.deepEqual(res.body, { code: -2019, msg: 'Margin is insufficient.' })
  })

  it('refuses a reduce-only order with nothing to reduce (-2022), a crossing post-only (-5022) and an unfillable FOK (-5021)', async () => {
    await refused({ reduceOnly: 'true' }, -2022, 'ReduceOnly Order is rejected.')
    const crossing = (Math.ceil(price * 1.01 * 10) / 10).toFixed(1)
    const below = (Math.floor(price * 0.9 * 10) / 10).toFixed(1)
    await refused({ type: 'LIMIT', timeInForce: 'GTX', price: crossing }, -5022, 'Due to the order could not be executed as maker, the Post Only order will be rejected.')
    await refused({ type: 'LIMIT', timeInForce: 'FOK', price: below }, -5021, 'Due to the order could not be filled immediately, the FOK order has been rejected.')
  })

  it('expires an IOC that cannot fill and fills one that crosses', async () => {
    const below = (Math.floor(price * 0.9 * 10) / 10).toFixed(1)
    const expired = await order({ type: 'LIMIT', timeInForce: 'IOC', price: below, newOrderRespType: 'RESULT' })
    assert.equal(expired.body.status, 'EXPIRED')
    const crossing = await order({ type: 'LIMIT', timeInForce: 'IOC', price: (Math.ceil(price * 1.01 * 10) / 10).toFixed(1), newOrderRespType: 'RESULT' })
    assert.equal(crossing.body.status, 'FILLED')
    assert.equal(Number(crossing.body.avgPrice), price, 'a crossing limit fills as taker at the market price')
    await order({ side: 'SELL', reduceOnly: 'true' })
  })

  it('refuses a client order id already used by an open order with -4116, and a long one with -4015', async () => {
    const below = (Math.floor(price * 0.9 * 10) / 10).toFixed(1)
    const first = await order({ type: 'LIMIT', timeInForce: 'GTC', price: below, newClientOrderId: 'dup-1' })
    assert.equal(first.status, 200)
    await refused({ type: 'LIMIT', timeInForce: 'GTC', price: below, newClientOrderId: 'dup-1' }, -4116, 'ClientOrderId is duplicated.')
    await refused({ newClientOrderId: 'x'.repeat(37) }, -4015, 'Client order id length should not be more than 36 chars')
    const canceled = await t.call(keys, 'DELETE', '/fapi/v1/order', { symbol: 'BTCUSDT', origClientOrderId: 'dup-1' })
    assert.equal(canceled.body.status, 'CANCELED')
    assert.equal((await order({ type: 'LIMIT', timeInForce: 'GTC', price: below, newClientOrderId: 'dup-1' })).status, 200, 'free again once the first is closed')
    const all = await t.call(keys, 'DELETE', '/fapi/v1/allOpenOrders', { symbol: 'BTCUSDT' })
    assert.deepEqual(all.body, { code: 200, msg: 'The operation of cancel all open order is done.' })
  })

  it('answers unknown orders with -2013 on query and -2011 on cancel', async () => {
    const query = await t.call(keys, 'GET', '/fapi/v1/order', { symbol: 'BTCUSDT', orderId: 1 })
    assert.equal(query.status, 400)
    assert.deepEqual(query.body, { code: -2013, msg: 'Order does not exist.' })
    const cancel = await t.call(keys, 'DELETE', '/fapi/v1/order', { symbol: 'BTCUSDT', origClientOrderId: 'never' })
    assert.deepEqual(cancel.body, { code: -2011, msg: 'Unknown order sent.' })
  })

  it('says "no need to change" for margin type (-4046) and position mode (-4059), and refuses hedge mode', async () => {
    const margin = await t.call(keys, 'POST', '/fapi/v1/marginType', { symbol: 'BTCUSDT', marginType: 'CROSSED' })
    assert.deepEqual(margin.body, { code: -4046, msg: 'No need to change margin type.' })
    const mode = await t.call(keys, 'POST', '/fapi/v1/positionSide/dual', { dualSidePosition: 'false' })
    assert.deepEqual(mode.body, { code: -4059, msg: 'No need to change position side.' })
    const hedge = await t.call(keys, 'POST', '/fapi/v1/positionSide/dual', { dualSidePosition: 'true' })
    assert.equal(hedge.status, 400)
    assert.match(hedge.body.msg, /dualSidePosition.*One-way Mode only/)
    assert.deepEqual((await t.call(keys, 'GET', '/fapi/v1/positionSide/dual')).body, { dualSidePosition: false })
    await refused({ positionSide: 'LONG' }, -4061, "Order's position side does not match user's setting.")
  })

  it('takes parameters from a form body, the query winning a name sent in both, signed over query + body', async () => {
    const res = await t.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.010' }, { inBody: true })
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.body.origQty, '0.010')
    // Both: the signature covers "query" + "body" as sent.
    const timestamp = t.clock.now()
    const query = `symbol=BTCUSDT&side=SELL&quantity=0.010&timestamp=${timestamp}`
    const body = 'type=MARKET&quantity=0.020'
    const { sign } = await import('./support.js')
    const both = await fetch(`${t.exchange.url}/fapi/v1/order?${query}`, {
      method: 'POST',
      headers: { 'x-mbx-apikey': keys.apiKey, 'content-type': 'application/x-www-form-urlencoded' },
      body: `${body}&signature=${sign(keys.secretKey, query + body)}`,
    })
    const answer = (await both.json()) as { origQty: string }
    assert.equal(both.status, 200, JSON.stringify(answer))
    assert.equal(answer.origQty, '0.010', 'the query wins')
    const tampered = await fetch(`${t.exchange.url}/fapi/v1/order?${query}`, {
      method: 'POST',
      headers: { 'x-mbx-apikey': keys.apiKey, 'content-type': 'application/x-www-form-urlencoded' },
      body: `type=MARKET&quantity=0.030&signature=${sign(keys.secretKey, query + body)}`,
    })
    assert.deepEqual(await tampered.json(), { code: -1022, msg: 'Signature for this request is not valid.' })
  })

  it('serves leverage brackets, leverage, commission rates', async () => {
    // A list of one with `symbol`, as the live API answers (not the docs' single object).
    const [brackets, ...more] = (await t.call(keys, 'GET', '/fapi/v1/leverageBracket', { symbol: 'ETHUSDT' })).body
    assert.equal(more.length, 0)
    assert.equal(brackets.symbol, 'ETHUSDT')
    assert.deepEqual(brackets.brackets[0], { bracket: 1, initialLeverage: 125, notionalCap: 50000, notionalFloor: 0, maintMarginRatio: 0.004, cum: 0 })
    // ETHUSDT's own tiers (the 2024-10-24 snapshot): 10x reaches up to its 150,000,000 tier, not the BTCUSDT sample's 40,000,000.
    assert.deepEqual(brackets.brackets[1], { bracket: 2, initialLeverage: 100, notionalCap: 600000, notionalFloor: 50000, maintMarginRatio: 0.005, cum: 50 })
    assert.equal(brackets.brackets.length, 12)
    assert.deepEqual((await t.call(keys, 'POST', '/fapi/v1/leverage', { symbol: 'ETHUSDT', leverage: 10 })).body, { leverage: 10, maxNotionalValue: '150000000', symbol: 'ETHUSDT' })
    assert.equal((await t.call(keys, 'POST', '/fapi/v1/leverage', { symbol: 'ETHUSDT', leverage: 126 })).body.code, -4028)
    // XRPUSDT allows 75x at most: 100x is refused there, as on Binance.
    const [xrp] = (await t.call(keys, 'GET', '/fapi/v1/leverageBracket', { symbol: 'XRPUSDT' })).body
    assert.deepEqual(xrp.brackets[0], { bracket: 1, initialLeverage: 75, notionalCap: 10000, notionalFloor: 0, maintMarginRatio: 0.005, cum: 0 })
    assert.deepEqual((await t.call(keys, 'POST', '/fapi/v1/leverage', { symbol: 'XRPUSDT', leverage: 100 })).body, { code: -4028, msg: 'Leverage 100 is not valid' })
    assert.equal((await t.call(keys, 'POST', '/fapi/v1/leverage', { symbol: 'XRPUSDT', leverage: 75 })).status, 200)
    assert.deepEqual((await t.call(keys, 'GET', '/fapi/v1/commissionRate', { symbol: 'BTCUSDT' })).body, { symbol: 'BTCUSDT', makerCommissionRate: '0.0002', takerCommissionRate: '0.0005' })
  })
})
