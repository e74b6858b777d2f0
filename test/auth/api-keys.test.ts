import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { type SignedInUser, signIn } from './bearer.js'

for (const backend of backends()) {
  describe(`API key lifecycle (${backend})`, () => {
    let t: TestApp
    let user: SignedInUser
    before(async () => {
      t = await startTestApp(backend)
      user = await signIn(t)
    })
    after(() => t.close())

    const call = (who: SignedInUser, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
      t.app.inject({ method, url, headers: who.headers, ...(payload === undefined ? {} : { payload: payload as object }) })
    const create = async (who: SignedInUser, name: string, scopes: string[]) => {
      const res = await call(who, 'POST', '/v1/api-keys', { name, scopes })
      assert.equal(res.statusCode, 200, res.body)
      const body = res.json() as { id: string; secret: string }
      return { body: res.json() as Record<string, unknown>, pair: { api_key: body.id, api_secret: body.secret } as KeyPair }
    }
    const list = async (who: SignedInUser) => (await call(who, 'GET', '/v1/api-keys')).json().data as Record<string, unknown>[]
    const events = (type: string) =>
      t.database.handle.db.selectFrom('events').select(['user_id', 'type', 'data', 'created_at']).where('type', '=', type).execute()

    it('creates a key whose secret is shown once and signs requests at once', async () => {
      const { body, pair } = await create(user, 'trading bot', ['strategies:read', 'market:read', 'strategies:read'])
      assert.match(pair.api_key, /^pk_[0-9a-f]{24}$/)
      assert.match(pair.api_secret, /^[\w-]{43}$/)
      assert.deepEqual(Object.keys(body).sort(), ['_secret_warning', 'created_at', 'id', 'last_rotated_at', 'name', 'scopes', 'secret'])
      assert.equal(body.name, 'trading bot')
      assert.deepEqual(body.scopes, ['market:read', 'strategies:read'])
      assert.equal(body.created_at, new Date(t.clock.now()).toISOString())
      assert.equal(body.last_rotated_at, null)
      const used = await t.signed(pair, 'GET', '/v1/strategies')
      assert.equal(used.statusCode, 200, used.body)
      const forbidden = await t.signed(pair, 'POST', '/v1/strategies', {})
      assert.equal(forbidden.json().error.code, 'INSUFFICIENT_PERMISSION', 'the key carries only the scopes asked for')

      const listed = await call(user, 'GET', '/v1/api-keys')
      assert.equal(listed.statusCode, 200)
      assert.ok(!listed.body.includes(pair.api_secret), 'the list never shows a secret')
      const item = (listed.json().data as Record<string, unknown>[]).find((k) => k.id === pair.api_key)
      assert.deepEqual(Object.keys(item!).sort(), ['created_at', 'id', 'last_rotated_at', 'name', 'scopes'])
    })

    it('refuses unknown scopes, empty scope lists and bad names with 400, creating nothing', async () => {
      const before = await list(user)
      const cases: [unknown, string][] = [
        [{ name: 'x', scopes: ['market:read', 'admin:all'] }, 'scopes'],
        [{ name: 'x', scopes: [] }, 'scopes'],
        [{ name: 'x' }, 'scopes'],
        [{ name: '', scopes: ['market:read'] }, 'name'],
        [{ name: '   ', scopes: ['market:read'] }, 'name'],
        [{ name: 'x'.repeat(101), scopes: ['market:read'] }, 'name'],
        [{ name: 'x', scopes: ['market:read'], extra: 1 }, 'extra'],
      ]
      for (const [payload, field] of cases) {
        const res = await call(user, 'POST', '/v1/api-keys', payload)
        assert.equal(res.statusCode, 400, `${JSON.stringify(payload)}: ${res.body}`)
        assert.equal(res.json().error.code, 'INVALID_PARAMETER')
        assert.equal(res.json().error.field, field, res.body)
      }
      const unknown = await call(user, 'POST', '/v1/api-keys', { name: 'x', scopes: ['admin:all'] })
      assert.match(unknown.json().error.message, /unknown scope "admin:all"; known scopes: market:read/)
      assert.deepEqual(await list(user), before)
    })

    it('rotates: the old secret is refused on the very next request, the new one works, the event is in the outbox', async () => {
      const { pair } = await create(user, 'rotating', ['strategies:read'])
      // Used once first, so an embedded node has the old secret cached.
      assert.equal((await t.signed(pair, 'GET', '/v1/strategies')).statusCode, 200)
      t.clock.advance(1000)
      const rotated = await call(user, 'POST', `/v1/api-keys/${pair.api_key}/rotate`)
      assert.equal(rotated.statusCode, 200, rotated.body)
      const body = rotated.json() as Record<string, unknown>
      assert.equal(body.id, pair.api_key)
      assert.notEqual(body.secret, pair.api_secret)
      assert.equal(body.last_rotated_at, new Date(t.clock.now()).toISOString())
      assert.equal(typeof body._secret_warning, 'string')

      const old = await t.signed(pair, 'GET', '/v1/strategies')
      assert.equal(old.statusCode, 401)
      assert.equal(old.json().error.code, 'INVALID_SIGNATURE')
      const fresh = await t.signed({ api_key: pair.api_key, api_secret: body.secret as string }, 'GET', '/v1/strategies')
      assert.equal(fresh.statusCode, 200)

      const rotatedEvents = (await events('account.api_key_rotated')).filter((e) => (e.data as { key_id?: string }).key_id === pair.api_key)
      assert.equal(rotatedEvents.length, 1)
      const [event] = rotatedEvents
      assert.equal(event!.user_id, user.userId)
      assert.deepEqual(event!.data, { key_id: pair.api_key, name: 'rotating', rotated_at: body.last_rotated_at })
      assert.ok(!JSON.stringify(event!.data).includes(body.secret as string))
      const listed = (await list(user)).find((k) => k.id === pair.api_key)
      assert.equal(listed!.last_rotated_at, body.last_rotated_at)
    })

    it('deletes: the key is refused on the very next request and leaves the list', async () => {
      const { pair } = await create(user, 'short-lived', ['strategies:read'])
      assert.equal((await t.signed(pair, 'GET', '/v1/strategies')).statusCode, 200)
      const deleted = await call(user, 'DELETE', `/v1/api-keys/${pair.api_key}`)
      assert.equal(deleted.statusCode, 204)
      assert.equal(deleted.body, '')
      const refused = await t.signed(pair, 'GET', '/v1/strategies')
      assert.equal(refused.statusCode, 401)
      assert.equal(refused.json().error.code, 'UNAUTHENTICATED')
      assert.ok(!(await list(user)).some((k) => k.id === pair.api_key))
      for (const [method, url] of [['DELETE', `/v1/api-keys/${pair.api_key}`], ['POST', `/v1/api-keys/${pair.api_key}/rotate`]] as const) {
        const again = await call(user, method, url)
        assert.equal(again.statusCode, 404, `${method} ${url}`)
        assert.equal(again.json().error.code, 'NOT_FOUND')
      }
    })

    it("answers 404 for another user's key, which keeps working, and writes no event", async () => {
      const owner = await signIn(t)
      const { pair } = await create(owner, 'not yours', ['strategies:read'])
      const before = (await events('account.api_key_rotated')).length
      for (const [method, url] of [['POST', `/v1/api-keys/${pair.api_key}/rotate`], ['DELETE', `/v1/api-keys/${pair.api_key}`]] as const) {
        const res = await call(user, method, url)
        assert.equal(res.statusCode, 404, `${method} ${url}`)
      }
      assert.equal((await events('account.api_key_rotated')).length, before)
      assert.equal((await t.signed(pair, 'GET', '/v1/strategies')).statusCode, 200)
      assert.ok(!(await list(user)).some((k) => k.id === pair.api_key))
    })

    it('lets only a signed-in user manage keys: a signed API key gets 403, no credentials 401', async () => {
      const key = await t.createKey(['strategies:read', 'strategies:write', 'market:read', 'backtests:read', 'backtests:write', 'webhooks:read', 'webhooks:write'])
      const routes: [string, string, unknown][] = [
        ['POST', '/v1/api-keys', { name: 'escalate', scopes: ['webhooks:write'] }],
        ['GET', '/v1/api-keys', undefined],
        ['POST', `/v1/api-keys/${key.api_key}/rotate`, undefined],
        ['DELETE', `/v1/api-keys/${key.api_key}`, undefined],
      ]
      for (const [method, url, body] of routes) {
        const signed = await t.signed(key, method, url, body)
        assert.equal(signed.statusCode, 403, `${method} ${url}: ${signed.body}`)
        assert.equal(signed.json().error.code, 'INSUFFICIENT_PERMISSION')
        const anonymous = await t.app.inject({ method: method as 'GET', url, ...(body ? { payload: body as object } : {}) })
        assert.equal(anonymous.statusCode, 401, `${method} ${url}`)
      }
      assert.equal((await t.signed(key, 'GET', '/v1/strategies')).statusCode, 200, 'the key was neither rotated nor revoked')
    })

    it('refuses a malformed key id with 400 and a well-formed unknown one with 404', async () => {
      const malformed = await call(user, 'DELETE', '/v1/api-keys/strat_1234')
      assert.equal(malformed.statusCode, 400)
      assert.equal(malformed.json().error.field, 'id')
      const unknown = await call(user, 'POST', `/v1/api-keys/pk_${'0'.repeat(24)}/rotate`)
      assert.equal(unknown.statusCode, 404)
    })

    it('holds at most 20 active keys per user (429 LIMIT_REACHED); revoking one frees a place', async () => {
      const crowded = await signIn(t)
      const ids: string[] = []
      for (let i = 0; i < 20; i++) ids.push((await create(crowded, `key ${i}`, ['market:read'])).pair.api_key)
      const over = await call(crowded, 'POST', '/v1/api-keys', { name: 'one more', scopes: ['market:read'] })
      assert.equal(over.statusCode, 429)
      assert.equal(over.json().error.code, 'LIMIT_REACHED')
      assert.equal((await list(crowded)).length, 20)
      assert.equal((await call(crowded, 'DELETE', `/v1/api-keys/${ids[0]}`)).statusCode, 204)
      assert.equal((await call(crowded, 'POST', '/v1/api-keys', { name: 'one more', scopes: ['market:read'] })).statusCode, 200)
    })
  })
}
