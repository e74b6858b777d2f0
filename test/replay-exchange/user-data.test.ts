import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { binanceSignature, signedQuery } from '../../src/exchange-keys/binance-signer.js'
import { parseAccountFlag } from '../../src/replay-exchange/trading/accounts/accounts-file.js'
import { startReplayExchange } from '../../src/replay-exchange/index.js'
import { startCli } from '../cli/cli-process.js'
import { tempDir } from '../support/database.js'
import { DAY, FUTURES_DIR, SNAPSHOT_TIME, poll, startTestExchange, type TestExchange } from './support.js'

// Binance's published SIGNED example (HMAC SHA256, "SIGNED Endpoint Examples"): key, secret, the
// request's totalParams and its signature.
const VECTOR = {
  apiKey: 'vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco5ClKNuObs',
  secretKey: 'NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j',
  totalParams: 'symbol=LTCBTC&side=BUY&type=LIMIT&timeInForce=GTC&quantity=1&price=0.1&recvWindow=5000&timestamp=1499827319559',
  signature: 'c8db56825ae71d6d79447849e617115f4a920fa2acdcab2b053c4b2838bd6b71',
  timestamp: 1499827319559,
}

const TRADER = { apiKey: 'TRADERkey0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789ab', secretKey: 'TRADERsecret0123456789abcdefABCDEF0123456789abcdefABCDEF01234567' }

describe('Binance request signing', () => {
  it("reproduces Binance's published example signature", () => {
    assert.equal(binanceSignature(VECTOR.secretKey, VECTOR.totalParams), VECTOR.signature)
  })

  it('builds the query as sent: parameters, recvWindow, timestamp, then the signature over them', () => {
    const query = signedQuery(VECTOR.secretKey, { symbol: 'LTCBTC', side: 'BUY', type: 'LIMIT', timeInForce: 'GTC', quantity: 1, price: '0.1' }, VECTOR.timestamp)
    assert.equal(query, `${VECTOR.totalParams}&signature=${VECTOR.signature}`)
  })
})

describe('replay exchange: SIGNED USER_DATA endpoints', () => {
  let t: TestExchange
  before(async () => {
    t = await startTestExchange({ accounts: [{ ...TRADER, balances: { USDT: '12345.6', BNB: 2 } }, VECTOR] })
  })
  after(() => t.close())

  const signedGet = async (pathname: string, account = TRADER, options: { timestamp?: number; recvWindow?: number; secret?: string; tamper?: (q: string) => string } = {}) => {
    const query = signedQuery(options.secret ?? account.secretKey, {}, options.timestamp ?? t.clock.now(), options.recvWindow)
    const response = await fetch(`${t.exchange.url}${pathname}?${options.tamper ? options.tamper(query) : query}`, { headers: { 'x-mbx-apikey': account.apiKey } })
    return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> }
  }

  it('answers /fapi/v2/account with the configured balances in the v2 shape, weight 5', async () => {
    const res = await signedGet('/fapi/v2/account')
    assert.equal(res.status, 200, JSON.stringify(res.body))
    assert.equal(res.headers.get('x-mbx-used-weight-1m'), '5')
    const body = res.body as { assets: Record<string, unknown>[]; positions: unknown[] } & Record<string, unknown>
    assert.equal(body.totalWalletBalance, '12345.60000000')
    assert.equal(body.availableBalance, '12345.60000000')
    assert.equal(body.totalUnrealizedProfit, '0.00000000')
    assert.equal(body.canTrade, true)
    assert.equal(body.multiAssetsMargin, false)
    const btc = (body.positions as Record<string, unknown>[]).find((p) => p.symbol === 'BTCUSDT')
    assert.deepEqual([btc?.positionAmt, btc?.leverage, btc?.isolated], ['0.000', '20', false], 'every symbol is listed, flat, at 20x cross')
    assert.deepEqual(body.assets.map((a) => [a.asset, a.walletBalance, a.availableBalance, a.marginAvailable]), [
      ['BNB', '2.00000000', '2.00000000', true],
      ['USDT', '12345.60000000', '12345.60000000', true],
    ])
    assert.equal(body.assets[0]!.updateTime, SNAPSHOT_TIME, 'funded when the exchange started, in replay time')
  })

  it('answers /fapi/v2/balance with one row per asset and a stable account alias', async () => {
    const first = await signedGet('/fapi/v2/balance')
    t.clock.advance(1)
    const second = await signedGet('/fapi/v2/balance')
    assert.equal(first.status, 200)
    const rows = first.body as unknown as Record<string, unknown>[]
    assert.deepEqual(rows.map((r) => [r.asset, r.balance, r.crossWalletBalance]), [
      ['BNB', '2.00000000', '2.00000000'],
      ['USDT', '12345.60000000', '12345.60000000'],
    ])
    assert.match(String(rows[0]!.accountAlias), /^[A-Za-z]{8}$/)
    assert.equal((second.body as unknown as Record<string, unknown>[])[0]!.accountAlias, rows[0]!.accountAlias)
  })

  it("accepts Binance's published example request exactly as Binance signed it", async () => {
    t.clock.value = VECTOR.timestamp + 100
    const res = await fetch(`${t.exchange.url}/fapi/v2/balance?${VECTOR.totalParams}&signature=${VECTOR.signature}`, {
      headers: { 'x-mbx-apikey': VECTOR.apiKey },
    })
    assert.equal(res.status, 200)
    const upper = await fetch(`${t.exchange.url}/fapi/v2/balance?${VECTOR.totalParams}&signature=${VECTOR.signature.toUpperCase()}`, {
      headers: { 'x-mbx-apikey': VECTOR.apiKey },
    })
    assert.equal(upper.status, 200, 'HMAC signatures are not case-sensitive')
    t.clock.value = Date.UTC(2030, 0, 1)
  })

  it('refuses a wrong secret or a changed query with 400 -1022', async () => {
    const wrong = await signedGet('/fapi/v2/account', TRADER, { secret: `${TRADER.secretKey}x` })
    assert.equal(wrong.status, 400)
    assert.deepEqual(wrong.body, { code: -1022, msg: 'Signature for this request is not valid.' })
    const tampered = await signedGet('/fapi/v2/account', TRADER, { tamper: (q) => q.replace('recvWindow=5000', 'recvWindow=60000') })
    assert.equal(tampered.status, 400)
    assert.equal(tampered.body.code, -1022)
    const malformed = await signedGet('/fapi/v2/account', TRADER, { tamper: (q) => q.replace(/signature=\w+/, 'signature=zz') })
    assert.equal(malformed.body.code, -1022)
  })

  it('refuses an unknown key with 401 -2015 and a missing one with 401 -2014', async () => {
    const unknown = await signedGet('/fapi/v2/account', { apiKey: 'nobody0123456789', secretKey: TRADER.secretKey })
    assert.equal(unknown.status, 401)
    assert.equal(unknown.body.code, -2015)
    assert.match(String(unknown.body.msg), /^Invalid API-key, IP, or permissions for action, request ip: /)
    const missing = await fetch(`${t.exchange.url}/fapi/v2/account?${signedQuery(TRADER.secretKey, {}, t.clock.now())}`)
    assert.equal(missing.status, 401)
    assert.deepEqual(await missing.json(), { code: -2014, msg: 'API-key format invalid.' })
  })

  it('keeps the recvWindow: -1021 for a timestamp older than it or 1000 ms ahead', async () => {
    const now = t.clock.now()
    assert.equal((await signedGet('/fapi/v2/account', TRADER, { timestamp: now - 5000 })).status, 200)
    const old = await signedGet('/fapi/v2/account', TRADER, { timestamp: now - 5001 })
    assert.equal(old.status, 400)
    assert.deepEqual(old.body, { code: -1021, msg: 'Timestamp for this request is outside of the recvWindow.' })
    assert.equal((await signedGet('/fapi/v2/account', TRADER, { timestamp: now - 9000, recvWindow: 10_000 })).status, 200)
    assert.equal((await signedGet('/fapi/v2/account', TRADER, { timestamp: now + 999 })).status, 200)
    const ahead = await signedGet('/fapi/v2/account', TRADER, { timestamp: now + 1000 })
    assert.equal(ahead.status, 400)
    assert.equal(ahead.body.code, -1021)
    assert.match(String(ahead.body.msg), /1000ms ahead of the server's time/)
  })

  it('refuses missing or malformed parameters with Binance codes', async () => {
    const get = async (query: string) => {
      const res = await fetch(`${t.exchange.url}/fapi/v2/account?${query}`, { headers: { 'x-mbx-apikey': TRADER.apiKey } })
      return { status: res.status, body: (await res.json()) as { code: number; msg: string } }
    }
    const noTimestamp = await get(`recvWindow=5000&signature=${binanceSignature(TRADER.secretKey, 'recvWindow=5000')}`)
    assert.equal(noTimestamp.status, 400)
    assert.equal(noTimestamp.body.code, -1102)
    assert.match(noTimestamp.body.msg, /'timestamp'/)
    const noSignature = await get(`timestamp=${t.clock.now()}`)
    assert.equal(noSignature.body.code, -1102)
    assert.match(noSignature.body.msg, /'signature'/)
    assert.equal((await get(`timestamp=abc&signature=00`)).body.code, -1100)
    const wideWindow = `recvWindow=60001&timestamp=${t.clock.now()}`
    assert.equal((await get(`${wideWindow}&signature=${binanceSignature(TRADER.secretKey, wideWindow)}`)).body.code, -1130)
  })

  it('reads accounts from accounts.json in its data folder', async () => {
    const dir = tempDir('replay-accounts')
    try {
      fs.symlinkSync(FUTURES_DIR, path.join(dir, 'binance-um-futures'))
      fs.writeFileSync(path.join(dir, 'accounts.json'), JSON.stringify([{ ...TRADER, balances: { USDT: '50' } }]))
      const exchange = await startReplayExchange({ dataDir: dir })
      try {
        const query = signedQuery(TRADER.secretKey, {}, Date.now())
        const res = await fetch(`${exchange.url}/fapi/v2/balance?${query}`, { headers: { 'x-mbx-apikey': TRADER.apiKey } })
        assert.equal(res.status, 200)
        assert.deepEqual(((await res.json()) as { balance: string }[]).map((r) => r.balance), ['50.00000000'])
      } finally {
        await exchange.close()
      }
      fs.writeFileSync(path.join(dir, 'accounts.json'), JSON.stringify([{ apiKey: 'k', secretKey: 's', balances: { USDT: '-1' } }]))
      await assert.rejects(startReplayExchange({ dataDir: dir }), /accounts|balance USDT must be a non-negative decimal/)
      fs.writeFileSync(path.join(dir, 'accounts.json'), '{not json')
      await assert.rejects(startReplayExchange({ dataDir: dir }), /accounts\.json is not valid JSON/)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it('parses --account KEY:SECRET, splitting at the first colon', () => {
    assert.deepEqual(parseAccountFlag('abc:de:f'), { apiKey: 'abc', secretKey: 'de:f' })
    assert.throws(() => parseAccountFlag('nocolon'), /--account must be KEY:SECRET\[:BALANCE\]/)
    assert.throws(() => parseAccountFlag(':secret'), /--account must be KEY:SECRET\[:BALANCE\]/)
  })

  it('takes accounts from --account on the command line, with 10000 USDT each', async () => {
    const { child, output } = startCli(['replay-exchange', '--port', '0', '--account', `${TRADER.apiKey}:${TRADER.secretKey}`], {})
    try {
      const line = await poll('the JSON line', 15_000, () => (output().stdout.includes('\n') ? output().stdout : undefined))
      const { url } = JSON.parse(line) as { url: string }
      const res = await fetch(`${url}/fapi/v2/balance?${signedQuery(TRADER.secretKey, {}, Date.now())}`, { headers: { 'x-mbx-apikey': TRADER.apiKey } })
      assert.equal(res.status, 200)
      assert.deepEqual(((await res.json()) as { asset: string; balance: string }[]).map((r) => [r.asset, r.balance]), [['USDT', '10000.00000000']])
    } finally {
      child.kill('SIGTERM')
    }
  })
})

describe('replay exchange: signed requests in replay time', () => {
  let t: TestExchange
  before(async () => {
    t = await startTestExchange({ accounts: [TRADER] })
  })
  after(() => t.close())

  const balanceAt = async (timestamp: number) => {
    const res = await fetch(`${t.exchange.url}/fapi/v2/balance?${signedQuery(TRADER.secretKey, {}, timestamp)}`, { headers: { 'x-mbx-apikey': TRADER.apiKey } })
    return { status: res.status, body: (await res.json()) as { code?: number } }
  }

  it('accepts a timestamp in the replayed time that /fapi/v1/time reports, as clients with clock sync send it', async () => {
    const { body } = await t.get<{ serverTime: number }>('/fapi/v1/time')
    assert.ok(Math.abs(body.serverTime - t.clock.now()) > 365 * DAY, 'the replayed time is years from the wall clock')
    assert.equal((await balanceAt(body.serverTime)).status, 200)
    assert.equal((await balanceAt(body.serverTime - 4000)).status, 200)
    assert.equal((await balanceAt(t.clock.now())).status, 200, 'the wall clock still works')
  })

  it('keeps the window around each clock: too old or too far ahead of both is -1021', async () => {
    const { body } = await t.get<{ serverTime: number }>('/fapi/v1/time')
    const stale = await balanceAt(body.serverTime - 5001)
    assert.equal(stale.status, 400)
    assert.equal(stale.body.code, -1021)
    assert.equal((await balanceAt(body.serverTime + 1000)).body.code, -1021)
    assert.equal((await balanceAt(t.clock.now() + 1000)).body.code, -1021)
    assert.equal((await balanceAt(Math.floor((body.serverTime + t.clock.now()) / 2))).body.code, -1021)
  })
})
