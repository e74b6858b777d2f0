import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { backends } from '../support/database.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { signedHeaders } from '../support/signing.js'

const strategy = { name: 'trend', template_id: 'sma_cross', params: { fast: 10 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' }

for (const backend of backends()) {
  describe(`signed requests (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend)
    })
    after(() => t.close())

    it('accepts a correctly signed request and charges its weight', async () => {
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const created = await t.signed(key, 'POST', '/v1/strategies', strategy)
      assert.equal(created.statusCode, 200, created.body)
      const id = created.json().id as string
      const read = await t.signed(key, 'GET', `/v1/strategies/${id}`)
      assert.equal(read.statusCode, 200)
      assert.equal(read.json().id, id)
      assert.equal(read.headers['x-service-used-weight-1m'], '6') // 5 for create + 1 for get
      assert.match(String(read.headers.ratelimit), /r=1194/)
    })

    it('refuses a wrong signature with 401 INVALID_SIGNATURE', async () => {
      const key = await t.createKey(['strategies:read'])
      const res = await t.signed({ ...key, api_secret: `${key.api_secret}x` }, 'GET', '/v1/strategies')
      assert.equal(res.statusCode, 401)
      assert.equal(res.json().error.code, 'INVALID_SIGNATURE')
    })

    it('refuses a signature over another path or body', async () => {
      const key = await t.createKey(['strategies:write'])
      const headers = signedHeaders(key, 'POST', '/v1/strategies', JSON.stringify(strategy), t.clock.now())
      const res = await t.app.inject({
        method: 'POST',
        url: '/v1/strategies',
        payload: JSON.stringify({ ...strategy, capital: '999999' }),
        headers: { ...headers, 'content-type': 'application/json' },
      })
      assert.equal(res.statusCode, 401)
      assert.equal(res.json().error.code, 'INVALID_SIGNATURE')
    })

    it('refuses a timestamp 6 s old with 401 TIMESTAMP_EXPIRED, and one 6 s ahead', async () => {
      const key = await t.createKey(['strategies:read'])
      for (const offset of [-6000, 6000]) {
        const res = await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: signedHeaders(key, 'GET', '/v1/strategies', '', t.clock.now() + offset) })
        assert.equal(res.statusCode, 401)
        assert.equal(res.json().error.code, 'TIMESTAMP_EXPIRED')
      }
      const edge = await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: signedHeaders(key, 'GET', '/v1/strategies', '', t.clock.now() - 5000) })
      assert.equal(edge.statusCode, 200)
    })

    it('refuses the same signed request sent twice', async () => {
      const key = await t.createKey(['strategies:read'])
      const headers = signedHeaders(key, 'GET', '/v1/strategies?limit=5', '', t.clock.now())
      const first = await t.app.inject({ method: 'GET', url: '/v1/strategies?limit=5', headers })
      const second = await t.app.inject({ method: 'GET', url: '/v1/strategies?limit=5', headers })
      assert.equal(first.statusCode, 200)
      assert.equal(second.statusCode, 401)
      assert.equal(second.json().error.code, 'INVALID_SIGNATURE')
      assert.match(second.json().error.message, /already used/)
    })

    it('accepts a signature in uppercase hex, once: the same signature in either case is one claim', async () => {
      const key = await t.createKey(['strategies:read'])
      const headers = signedHeaders(key, 'GET', '/v1/strategies?limit=3', '', t.clock.now())
      const upper = { ...headers, 'x-service-signature': headers['x-service-signature']!.toUpperCase() }
      const first = await t.app.inject({ method: 'GET', url: '/v1/strategies?limit=3', headers: upper })
      assert.equal(first.statusCode, 200, first.body)
      const again = await t.app.inject({ method: 'GET', url: '/v1/strategies?limit=3', headers })
      assert.equal(again.statusCode, 401)
      assert.match(again.json().error.message, /already used/)
    })

    it('refuses a signature of the wrong length or with a non-hex digit', async () => {
      const key = await t.createKey(['strategies:read'])
      const headers = signedHeaders(key, 'GET', '/v1/strategies', '', t.clock.now())
      const good = headers['x-service-signature']!
      for (const bad of [good.slice(0, 63), `${good}0`, `${good}00`, `${good.slice(0, 30)}g${good.slice(31)}`, `${good.slice(0, 62)} 0`]) {
        const res = await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: { ...headers, 'x-service-signature': bad } })
        assert.equal(res.statusCode, 401, bad)
        assert.equal(res.json().error.code, 'INVALID_SIGNATURE', bad)
      }
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/strategies', headers })).statusCode, 200)
    })

    it('refuses a key without the scope with 403 INSUFFICIENT_PERMISSION and changes nothing', async () => {
      const key = await t.createKey(['strategies:read'])
      const res = await t.signed(key, 'POST', '/v1/strategies', strategy)
      assert.equal(res.statusCode, 403)
      assert.equal(res.json().error.code, 'INSUFFICIENT_PERMISSION')
      const list = await t.signed(key, 'GET', '/v1/strategies')
      assert.deepEqual(list.json().data, [])
    })

    it("answers 404 NOT_FOUND for another user's strategy on every route", async () => {
      const owner = await t.createKey(['strategies:read', 'strategies:write'])
      const other = await t.createKey(['strategies:read', 'strategies:write'])
      const id = (await t.signed(owner, 'POST', '/v1/strategies', strategy)).json().id as string
      for (const [method, body] of [['GET', undefined], ['PATCH', { name: 'mine now' }], ['DELETE', undefined]] as const) {
        const res = await t.signed(other, method, `/v1/strategies/${id}`, body)
        assert.equal(res.statusCode, 404, `${method}: ${res.body}`)
        assert.equal(res.json().error.code, 'NOT_FOUND')
      }
      const list = await t.signed(other, 'GET', '/v1/strategies')
      assert.deepEqual(list.json().data, [])
      const still = await t.signed(owner, 'GET', `/v1/strategies/${id}`)
      assert.equal(still.json().name, 'trend')
    })

    it('refuses requests without credentials, with partial headers, or with an unknown key', async () => {
      const none = await t.app.inject({ method: 'GET', url: '/v1/strategies' })
      assert.equal(none.statusCode, 401)
      assert.equal(none.json().error.code, 'UNAUTHENTICATED')
      const partial = await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: { 'x-service-api-key': 'pk_x' } })
      assert.equal(partial.statusCode, 401)
      const unknown = await t.signed({ api_key: 'pk_000000000000000000000000', api_secret: 'nope' }, 'GET', '/v1/strategies')
      assert.equal(unknown.statusCode, 401)
      assert.equal(unknown.json().error.code, 'UNAUTHENTICATED')
    })

    it('accepts a Bearer app token with all scopes, and refuses it once expired', async () => {
      const key = await t.createKey(['market:read'], 'bearer-user@example.test')
      const owner = await t.services.keys.find(key.api_key)
      const token = await t.services.tokens.issue(owner!.userId, t.clock.now())
      const auth = { authorization: `Bearer ${token}` }
      const created = await t.app.inject({ method: 'POST', url: '/v1/strategies', payload: strategy, headers: auth })
      assert.equal(created.statusCode, 200, created.body)
      t.clock.advance(3601_000)
      try {
        const expired = await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: auth })
        assert.equal(expired.statusCode, 401)
        assert.equal(expired.json().error.code, 'UNAUTHENTICATED')
      } finally {
        t.clock.advance(-3601_000)
      }
      const garbage = await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: { authorization: 'Bearer not.a.token' } })
      assert.equal(garbage.statusCode, 401)
    })
  })

  describe(`weight budget (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend, { RATE_LIMIT_WEIGHT_PER_MINUTE: '12' })
    })
    after(() => t.close())

    it('answers 429 RATE_LIMITED with Retry-After once the per-key budget is spent, per key', async () => {
      // Start at the beginning of a window so the test cannot straddle two.
      t.clock.value = Math.ceil(t.clock.value / 60_000) * 60_000 + 1000
      const key = await t.createKey(['strategies:read'])
      for (let i = 0; i < 2; i++) assert.equal((await t.signed(key, 'GET', '/v1/strategies')).statusCode, 200)
      const limited = await t.signed(key, 'GET', '/v1/strategies')
      assert.equal(limited.statusCode, 429)
      assert.equal(limited.json().error.code, 'RATE_LIMITED')
      assert.equal(limited.headers['retry-after'], '59')
      assert.equal(limited.headers['x-service-used-weight-1m'], '15')
      const otherKey = await t.createKey(['strategies:read'])
      assert.equal((await t.signed(otherKey, 'GET', '/v1/strategies')).statusCode, 200)
      t.clock.advance(60_000)
      const nextWindow = await t.signed(key, 'GET', '/v1/strategies')
      assert.equal(nextWindow.statusCode, 200, nextWindow.body)
    })
  })
}
