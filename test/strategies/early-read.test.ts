import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { signedHeaders } from '../support/signing.js'

// GET /v1/strategies/{id} reads the strategy beside the admission (replay claim + weight charge) instead
// of after it: a request the admission refuses must still answer exactly as before and carry nothing read.
const strategy = { name: 'secret-sauce', template_id: 'sma_cross', params: { fast: 10 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' }

for (const backend of backends()) {
  describe(`GET /v1/strategies/{id} read beside the admission (${backend})`, () => {
    let t: TestApp
    before(async () => {
      // 5 (create) + 1 (get) fills the budget: the next read is refused.
      t = await startTestApp(backend, { RATE_LIMIT_WEIGHT_PER_MINUTE: '6' })
    })
    after(() => t.close())

    it('answers a replayed signature 401 with no part of the strategy, and charges it nothing', async () => {
      t.clock.value = Math.ceil(t.clock.value / 60_000) * 60_000 + 1000
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const id = (await t.signed(key, 'POST', '/v1/strategies', strategy)).json().id as string
      const url = `/v1/strategies/${id}`
      const headers = signedHeaders(key, 'GET', url, '', t.clock.now())
      const [first, second] = await Promise.all([t.app.inject({ method: 'GET', url, headers }), t.app.inject({ method: 'GET', url, headers })])
      const answers = [first, second].sort((a, b) => a.statusCode - b.statusCode)
      assert.equal(answers[0]!.statusCode, 200, answers[0]!.body)
      assert.equal(answers[0]!.json().name, 'secret-sauce')
      assert.equal(answers[1]!.statusCode, 401, answers[1]!.body)
      assert.equal(answers[1]!.json().error.code, 'INVALID_SIGNATURE')
      assert.doesNotMatch(answers[1]!.body, /secret-sauce|sma_cross|BTCUSDT/)
      assert.equal(answers[1]!.headers['x-service-used-weight-1m'], undefined, 'a refused claim is charged nothing')
      assert.equal(answers[0]!.headers['x-service-used-weight-1m'], '6')
    })

    it('answers 429 past the budget with no part of the strategy, charged as before', async () => {
      t.clock.value = Math.ceil(t.clock.value / 60_000) * 60_000 + 1000
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const id = (await t.signed(key, 'POST', '/v1/strategies', strategy)).json().id as string
      assert.equal((await t.signed(key, 'GET', `/v1/strategies/${id}`)).statusCode, 200)
      const limited = await t.signed(key, 'GET', `/v1/strategies/${id}`)
      assert.equal(limited.statusCode, 429, limited.body)
      assert.equal(limited.json().error.code, 'RATE_LIMITED')
      assert.equal(limited.headers['x-service-used-weight-1m'], '7')
      assert.doesNotMatch(limited.body, /secret-sauce|sma_cross|BTCUSDT/)
    })

    it("answers 403 to a key without strategies:read and 404 for another user's strategy, with nothing of it", async () => {
      t.clock.value = Math.ceil(t.clock.value / 60_000) * 60_000 + 1000
      const owner = await t.createKey(['strategies:read', 'strategies:write'])
      const id = (await t.signed(owner, 'POST', '/v1/strategies', strategy)).json().id as string
      const writer = await t.createKey(['strategies:write'])
      const refused = await t.signed(writer, 'GET', `/v1/strategies/${id}`)
      assert.equal(refused.statusCode, 403)
      assert.doesNotMatch(refused.body, /secret-sauce/)
      const other = await t.createKey(['strategies:read'])
      const missing = await t.signed(other, 'GET', `/v1/strategies/${id}`)
      assert.equal(missing.statusCode, 404, missing.body)
      assert.doesNotMatch(missing.body, /secret-sauce/)
    })
    it('answers the same bytes from a cached row as from a fresh one, and the new record right after a PATCH', async () => {
      t.clock.value = Math.ceil(t.clock.value / 60_000) * 60_000 + 1000
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const created = await t.signed(key, 'POST', '/v1/strategies', strategy)
      const id = created.json().id as string
      const first = await t.signed(key, 'GET', `/v1/strategies/${id}`)
      t.clock.value = Math.ceil(t.clock.value / 60_000) * 60_000 + 1000 // a fresh budget window
      const second = await t.signed(key, 'GET', `/v1/strategies/${id}`)
      for (const res of [first, second]) {
        assert.equal(res.statusCode, 200, res.body)
        assert.equal(res.headers['content-type'], 'application/json; charset=utf-8')
        assert.deepEqual(res.json(), created.json())
      }
      assert.equal(second.body, first.body)
      const patched = await t.signed(key, 'PATCH', `/v1/strategies/${id}`, { name: 'renamed' })
      assert.equal(patched.statusCode, 200, patched.body)
      t.clock.value = Math.ceil(t.clock.value / 60_000) * 60_000 + 1000
      const reread = await t.signed(key, 'GET', `/v1/strategies/${id}`)
      assert.equal(reread.json().name, 'renamed')
      assert.deepEqual(reread.json(), patched.json())
    })
  })
}
