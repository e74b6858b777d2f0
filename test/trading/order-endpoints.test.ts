import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startReplay, startTestApp, type ReplayExchange, type TestApp } from '../support/app.js'
import { memoryLogger, secretsFound, textColumnDump } from '../support/secret-scan.js'

const TRADER = {
  api_key: 'TRADERkey23456789abcdefABCDEF0123456789abcdefABCDEF0123456789ab',
  api_secret: 'TRADERsecret56789abcdefABCDEF0123456789abcdefABCDEF0123456789zz',
}

/** The body-credential trading endpoints against a replay exchange holding TRADER's account. */
describe('trading endpoints with body credentials', () => {
  let t: TestApp
  let replay: ReplayExchange
  const logs = memoryLogger()
  before(async () => {
    // The exchange keeps the app's (test) clock, so our signed timestamps stay inside its recvWindow however long the run.
    replay = await startReplay({
      now: () => (t as TestApp | undefined)?.clock.now() ?? Date.now(),
      accounts: [{ apiKey: TRADER.api_key, secretKey: TRADER.api_secret, balances: { USDT: '10000' } }],
    })
    t = await startTestApp('pglite', { UPSTREAM_URL: replay.url, LOG_LEVEL: 'trace' }, { logger: logs.logger })
  })
  after(async () => {
    await t.close()
    await replay.close()
  })

  const post = (url: string, payload: Record<string, unknown>) => t.app.inject({ method: 'POST', url, payload })
  const exchangeCalls = (path: string) => replay.stats().byPath[path] ?? 0

  it('reads balances with the body credentials, signed upstream', async () => {
    const calls = exchangeCalls('/fapi/v2/balance')
    const res = await post('/balance/auth', TRADER)
    assert.equal(res.statusCode, 200, res.body)
    const usdt = (res.json() as { asset: string; balance: string }[]).find((row) => row.asset === 'USDT')
    assert.equal(Number(usdt?.balance), 10000)
    assert.equal(exchangeCalls('/fapi/v2/balance'), calls + 1)
  })

  it("answers the exchange's refusal as 400 with Binance's code and message", async () => {
    const res = await post('/balance/auth', { ...TRADER, api_secret: 'wrong-secret-0123456789' })
    assert.equal(res.statusCode, 400)
    assert.deepEqual(res.json(), { detail: 'Signature for this request is not valid.', code: -1022, msg: 'Signature for this request is not valid.' })
  })

  it('answers 422 in the FastAPI shape for missing or wrong-typed fields, without calling the exchange', async () => {
    const calls = replay.stats().requests
    const missing = await post('/orders/auth', { api_key: TRADER.api_key, symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.01' })
    assert.equal(missing.statusCode, 422)
    assert.deepEqual((missing.json() as { detail: { loc: unknown[] }[] }).detail[0]!.loc, ['body', 'api_secret'])
    const wrongType = await post('/orders/auth', { ...TRADER, symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: 0.01 })
    assert.equal(wrongType.statusCode, 422)
    const badSide = await post('/orders/auth', { ...TRADER, symbol: 'BTCUSDT', side: 'LONG', type: 'MARKET', quantity: '0.01' })
    assert.equal(badSide.statusCode, 422)
    const noPrice = await post('/orders/auth', { ...TRADER, symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: '0.01' })
    assert.equal(noPrice.statusCode, 400)
    assert.match((noPrice.json() as { detail: string }).detail, /price is required/)
    assert.equal(replay.stats().requests, calls, 'nothing reached the exchange')
    for (const res of [missing, wrongType, badSide, noPrice]) assert.ok(!res.body.includes(TRADER.api_secret))
  })

  it('places a market order that reaches the exchange signed, and reads the position it opened', async () => {
    const calls = exchangeCalls('/fapi/v1/order')
    const res = await post('/orders/auth', { ...TRADER, symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.010', client_order_id: 'my-order-1' })
    assert.equal(res.statusCode, 200, res.body)
    const order = res.json() as { status: string; clientOrderId: string; executedQty: string; side: string }
    assert.equal(order.status, 'FILLED')
    assert.equal(order.clientOrderId, 'my-order-1')
    assert.equal(Number(order.executedQty), 0.01)
    assert.equal(exchangeCalls('/fapi/v1/order'), calls + 1)

    const positions = await post('/positions/auth', { ...TRADER, symbol: 'BTCUSDT' })
    assert.equal(positions.statusCode, 200, positions.body)
    const row = (positions.json() as { symbol: string; positionAmt: string }[]).find((p) => p.symbol === 'BTCUSDT')
    assert.equal(Number(row?.positionAmt), 0.01)
  })

  it('rests a limit order far from the price, lists it open, and cancels it by client order id', async () => {
    const placed = await post('/orders/auth', { ...TRADER, symbol: 'BTCUSDT', side: 'BUY', type: 'LIMIT', quantity: '0.200', price: '1000', client_order_id: 'resting-1' })
    assert.equal(placed.statusCode, 200, placed.body)
    assert.equal((placed.json() as { status: string }).status, 'NEW')
    const open = await post('/orders/open/auth', { ...TRADER, symbol: 'BTCUSDT' })
    assert.deepEqual((open.json() as { clientOrderId: string }[]).map((o) => o.clientOrderId), ['resting-1'])
    const cancelled = await post('/orders/cancel/auth', { ...TRADER, symbol: 'BTCUSDT', client_order_id: 'resting-1' })
    assert.equal(cancelled.statusCode, 200, cancelled.body)
    assert.equal((cancelled.json() as { status: string }).status, 'CANCELED')
    const again = await post('/orders/cancel/auth', { ...TRADER, symbol: 'BTCUSDT', client_order_id: 'resting-1' })
    assert.equal(again.statusCode, 400)
    assert.equal((again.json() as { code: number }).code, -2011)
    const both = await post('/orders/cancel/auth', { ...TRADER, symbol: 'BTCUSDT', order_id: 1, client_order_id: 'resting-1' })
    assert.equal(both.statusCode, 400)
  })

  it('sets leverage and margin type, passing "no need to change" through as the refusal it is', async () => {
    const leverage = await post('/leverage/auth', { ...TRADER, symbol: 'ETHUSDT', leverage: 5 })
    assert.equal(leverage.statusCode, 200, leverage.body)
    assert.equal((leverage.json() as { leverage: number }).leverage, 5)
    const isolated = await post('/margin-type/auth', { ...TRADER, symbol: 'ETHUSDT', margin_type: 'ISOLATED' })
    assert.equal(isolated.statusCode, 200, isolated.body)
    const again = await post('/margin-type/auth', { ...TRADER, symbol: 'ETHUSDT', margin_type: 'ISOLATED' })
    assert.equal(again.statusCode, 400)
    assert.equal((again.json() as { code: number }).code, -4046)
    const tooHigh = await post('/leverage/auth', { ...TRADER, symbol: 'ETHUSDT', leverage: 126 })
    assert.equal(tooHigh.statusCode, 422)
  })

  it('an order answered 503 "Unknown error" after it executed is looked up, not sent again', async () => {
    const remove = replay.faults.add({ path: '/fapi/v1/order', executeThen: 503, times: 1 })
    try {
      const calls = exchangeCalls('/fapi/v1/order')
      const res = await post('/orders/auth', { ...TRADER, symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.010', client_order_id: 'unknown-1' })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal((res.json() as { clientOrderId: string; status: string }).clientOrderId, 'unknown-1')
      // one POST, then GETs by client order id: never a second POST
      const posts = exchangeCalls('/fapi/v1/order') - calls
      assert.ok(posts >= 2, 'the order was looked up')
      const positions = await post('/positions/auth', { ...TRADER, symbol: 'BTCUSDT' })
      const row = (positions.json() as { symbol: string; positionAmt: string }[]).find((p) => p.symbol === 'BTCUSDT')
      assert.equal(Number(row?.positionAmt), 0.02, 'the first 0.01 and this 0.01: executed once')
    } finally {
      remove()
    }
  })

  it('an order whose outcome stays unknown answers 502 with its client order id, and is never sent twice', async () => {
    const lost = replay.faults.add({ path: '/fapi/v1/order', executeThen: -1007, times: 1 })
    const forgotten = replay.faults.add({ path: '/fapi/v1/order', forget: true })
    try {
      const res = await post('/orders/auth', { ...TRADER, symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.010', client_order_id: 'lost-1' })
      assert.equal(res.statusCode, 502, res.body)
      const body = res.json() as { detail: string; client_order_id: string }
      assert.equal(body.client_order_id, 'lost-1')
      assert.match(body.detail, /unknown/)
    } finally {
      lost()
      forgotten()
    }
    const found = await post('/orders/query/auth', { ...TRADER, symbol: 'BTCUSDT', client_order_id: 'lost-1' })
    assert.equal(found.statusCode, 200, found.body)
    assert.equal((found.json() as { status: string }).status, 'FILLED')
    const positions = await post('/positions/auth', { ...TRADER, symbol: 'BTCUSDT' })
    const row = (positions.json() as { symbol: string; positionAmt: string }[]).find((p) => p.symbol === 'BTCUSDT')
    assert.equal(Number(row?.positionAmt), 0.03, 'executed exactly once')
  })

  it('closes the whole position with a reduce-only market order', async () => {
    const res = await post('/positions/close/auth', { ...TRADER, symbol: 'BTCUSDT' })
    assert.equal(res.statusCode, 200, res.body)
    const order = res.json() as { side: string; reduceOnly: boolean; status: string }
    assert.equal(order.side, 'SELL')
    assert.equal(order.reduceOnly, true)
    const positions = await post('/positions/auth', { ...TRADER, symbol: 'BTCUSDT' })
    const row = (positions.json() as { symbol: string; positionAmt: string }[]).find((p) => p.symbol === 'BTCUSDT')
    assert.equal(Number(row?.positionAmt), 0)
    const flat = await post('/positions/close/auth', { ...TRADER, symbol: 'BTCUSDT' })
    assert.equal(flat.statusCode, 400)
    assert.match((flat.json() as { detail: string }).detail, /no open position/)
  })

  it('answers 502 when the exchange fails', async () => {
    const remove = replay.faults.add({ path: '/fapi/v2/balance', status: 502 })
    try {
      const res = await post('/balance/auth', TRADER)
      assert.equal(res.statusCode, 502)
      assert.ok(!res.body.includes(TRADER.api_secret))
    } finally {
      remove()
    }
  })

  it('leaves the api secret in no database column and no log line', async () => {
    const found = secretsFound([...(await textColumnDump(t.services.database.db)), ...logs.lines()], [
      { label: 'api_secret', value: TRADER.api_secret },
      { label: 'api_key', value: TRADER.api_key },
    ])
    assert.deepEqual(found, [])
    assert.ok(logs.lines().length > 0, 'the trace-level logs were written')
  })
})
