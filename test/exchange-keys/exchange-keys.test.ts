import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { SCOPES } from '../../src/auth/scopes.js'
import { startReplay, startTestApp, type ReplayExchange, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { type SignedInUser, signIn } from '../auth/bearer.js'

const GOOD = { api_key: 'GOODkey0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789ab', api_secret: 'GOODsecret0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789' }
const OTHER = { api_key: 'OTHERkey123456789abcdefABCDEF0123456789abcdefABCDEF0123456789ab', api_secret: 'OTHERsecret123456789abcdefABCDEF0123456789abcdefABCDEF012345678' }
const ACCOUNT_PATH = '/fapi/v2/account'

/**
 * The app with a replay exchange that holds the GOOD and OTHER accounts. The exchange times signed
 * requests by the app's clock, so moving the test clock (past the once-a-minute re-check) never puts
 * our timestamps outside its recvWindow.
 */
async function startWithExchange(backend: Parameters<typeof startTestApp>[0]): Promise<{ t: TestApp; replay: ReplayExchange }> {
  let app: TestApp | undefined
  const replay = await startReplay({
    now: () => app?.clock.now() ?? Date.now(),
    accounts: [
      { apiKey: GOOD.api_key, secretKey: GOOD.api_secret },
      { apiKey: OTHER.api_key, secretKey: OTHER.api_secret },
    ],
  })
  app = await startTestApp(backend, { UPSTREAM_URL: replay.url })
  return { t: app, replay }
}

for (const backend of backends()) {
  describe(`registered exchange keys (${backend})`, () => {
    let t: TestApp
    let replay: ReplayExchange
    let user: SignedInUser
    before(async () => {
      ;({ t, replay } = await startWithExchange(backend))
      user = await signIn(t)
    })
    after(async () => {
      await t.close()
      await replay.close()
    })

    const call = (who: SignedInUser, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) =>
      t.app.inject({ method, url, headers: who.headers, ...(payload === undefined ? {} : { payload: payload as object }) })
    const register = async (who: SignedInUser, payload: Record<string, unknown>) => {
      const res = await call(who, 'POST', '/v1/exchange-keys', payload)
      assert.equal(res.statusCode, 200, res.body)
      assert.ok(!res.body.includes(String(payload.api_secret)), 'no secret in the response')
      assert.ok(!res.body.includes(String(payload.api_key)), 'the API key only masked')
      return res.json() as Record<string, unknown>
    }
    const upstreamCalls = () => replay.stats().byPath[ACCOUNT_PATH] ?? 0

    it('verifies a good key with a signed account request and stores it masked', async () => {
      const calls = upstreamCalls()
      const key = await register(user, { ...GOOD, label: 'main account' })
      assert.equal(upstreamCalls(), calls + 1)
      assert.match(String(key.id), /^xk_[0-9a-f]{8}$/)
      assert.deepEqual(
        { ...key, id: undefined },
        {
          id: undefined,
          label: 'main account',
          api_key: 'GOOD…89ab',
          verification_status: 'verified',
          last_verified: new Date(t.clock.now()).toISOString(),
          verification_error: null,
          created_at: new Date(t.clock.now()).toISOString(),
        },
      )
      const listed = await call(user, 'GET', '/v1/exchange-keys')
      assert.equal(listed.statusCode, 200)
      assert.deepEqual(listed.json().data, [key])
      assert.ok(!listed.body.includes(GOOD.api_secret))
    })

    it('records a wrong secret as failed with the exchange’s -1022, and an unknown key with -2015', async () => {
      const who = await signIn(t)
      const wrong = await register(who, { api_key: OTHER.api_key, api_secret: `${OTHER.api_secret}x` })
      assert.equal(wrong.verification_status, 'failed')
      assert.deepEqual(wrong.verification_error, { code: -1022, message: 'Signature for this request is not valid.' })
      assert.equal(wrong.last_verified, new Date(t.clock.now()).toISOString())
      t.clock.advance(1)
      const unknown = await register(who, { api_key: 'UNKNOWNkey0123456789', api_secret: 'whatever-secret-0123' })
      assert.equal(unknown.verification_status, 'failed')
      assert.equal((unknown.verification_error as { code: number }).code, -2015)
      const listed = (await call(who, 'GET', '/v1/exchange-keys')).json().data as Record<string, unknown>[]
      assert.deepEqual(listed.map((k) => k.id), [unknown.id, wrong.id], 'newest first')
    })

    it('keeps a key as pending when the exchange cannot be asked, and checks again after a minute', async () => {
      const who = await signIn(t)
      const remove = replay.faults.add({ path: ACCOUNT_PATH, status: 503 })
      let key: Record<string, unknown>
      try {
        key = await register(who, GOOD)
      } finally {
        remove()
      }
      assert.equal(key.verification_status, 'pending')
      assert.equal(key.last_verified, null)
      assert.match(String((key.verification_error as { message: string }).message), /upstream exchange answered 503/)
      const calls = upstreamCalls()
      const soon = await call(who, 'POST', `/v1/exchange-keys/${key.id}/verify`)
      assert.equal(soon.statusCode, 200, soon.body)
      assert.equal(soon.json().verification_status, 'pending', 'within the minute the recorded state is returned')
      assert.equal(upstreamCalls(), calls, 'and the exchange is not asked again')
      t.clock.advance(60_001)
      const later = await call(who, 'POST', `/v1/exchange-keys/${key.id}/verify`)
      assert.equal(later.json().verification_status, 'verified')
      assert.equal(later.json().verification_error, null)
      assert.equal(later.json().last_verified, new Date(t.clock.now()).toISOString())
      assert.equal(upstreamCalls(), calls + 1)
    })

    it('keeps a verified key verified when a later check cannot reach the exchange', async () => {
      const who = await signIn(t)
      const key = await register(who, GOOD)
      t.clock.advance(60_001)
      const remove = replay.faults.add({ path: ACCOUNT_PATH, status: 502 })
      try {
        const res = await call(who, 'POST', `/v1/exchange-keys/${key.id}/verify`)
        assert.equal(res.json().verification_status, 'verified')
        assert.equal(res.json().last_verified, key.last_verified)
      } finally {
        remove()
      }
    })

    it('refuses the same key twice for one user with 409 DUPLICATE_KEY; another user may register it', async () => {
      const who = await signIn(t)
      const first = await register(who, GOOD)
      const again = await call(who, 'POST', '/v1/exchange-keys', { ...GOOD, label: 'again' })
      assert.equal(again.statusCode, 409)
      assert.equal(again.json().error.code, 'DUPLICATE_KEY')
      assert.match(again.json().error.message, new RegExp(String(first.id)))
      await register(await signIn(t), GOOD)
    })

    it('deletes a key (404 for another user’s, which stays)', async () => {
      const owner = await signIn(t)
      const key = await register(owner, OTHER)
      const stranger = await call(user, 'DELETE', `/v1/exchange-keys/${key.id}`)
      assert.equal(stranger.statusCode, 404)
      assert.equal((await call(user, 'POST', `/v1/exchange-keys/${key.id}/verify`)).statusCode, 404)
      assert.equal(((await call(owner, 'GET', '/v1/exchange-keys')).json().data as unknown[]).length, 1)
      const deleted = await call(owner, 'DELETE', `/v1/exchange-keys/${key.id}`)
      assert.equal(deleted.statusCode, 204)
      assert.deepEqual((await call(owner, 'GET', '/v1/exchange-keys')).json().data, [])
      assert.equal((await call(owner, 'DELETE', `/v1/exchange-keys/${key.id}`)).statusCode, 404)
      const row = await t.database.handle.db.selectFrom('exchange_keys').select('id').where('id', '=', String(key.id)).executeTakeFirst()
      assert.equal(row, undefined, 'the sealed secret is gone with the row')
    })

    it('refuses malformed credentials with 400 naming the field, storing nothing and asking no exchange', async () => {
      const who = await signIn(t)
      const calls = upstreamCalls()
      const cases: [Record<string, unknown>, string][] = [
        [{ api_key: 'short', api_secret: GOOD.api_secret }, 'api_key'],
        [{ api_key: `${GOOD.api_key}\r\nX-Injected: 1`, api_secret: GOOD.api_secret }, 'api_key'],
        [{ api_key: 'with spaces in the key 0123', api_secret: GOOD.api_secret }, 'api_key'],
        [{ api_key: GOOD.api_key, api_secret: 'sécret-with-non-ascii-0123' }, 'api_secret'],
        [{ api_key: GOOD.api_key, api_secret: 'x'.repeat(257) }, 'api_secret'],
        [{ api_key: GOOD.api_key }, 'api_secret'],
        [{ ...GOOD, label: 'x'.repeat(101) }, 'label'],
      ]
      for (const [payload, field] of cases) {
        const res = await call(who, 'POST', '/v1/exchange-keys', payload)
        assert.equal(res.statusCode, 400, `${JSON.stringify(payload).slice(0, 80)}: ${res.body}`)
        assert.equal(res.json().error.field, field)
      }
      assert.equal(upstreamCalls(), calls)
      assert.deepEqual((await call(who, 'GET', '/v1/exchange-keys')).json().data, [])
    })

    it('lets only a signed-in user manage exchange keys: a signed API key gets 403, no credentials 401', async () => {
      const key = await t.createKey([...SCOPES])
      const routes: [string, string, unknown][] = [
        ['POST', '/v1/exchange-keys', GOOD],
        ['GET', '/v1/exchange-keys', undefined],
        ['POST', '/v1/exchange-keys/xk_00000000/verify', undefined],
        ['DELETE', '/v1/exchange-keys/xk_00000000', undefined],
      ]
      for (const [method, url, body] of routes) {
        const signed = await t.signed(key, method, url, body)
        assert.equal(signed.statusCode, 403, `${method} ${url}: ${signed.body}`)
        assert.equal(signed.json().error.code, 'INSUFFICIENT_PERMISSION')
        const anonymous = await t.app.inject({ method: method as 'GET', url, ...(body ? { payload: body as object } : {}) })
        assert.equal(anonymous.statusCode, 401)
      }
    })

    it('holds at most 10 exchange keys per user (429 LIMIT_REACHED)', async () => {
      const who = await signIn(t)
      for (let i = 0; i < 10; i++) await register(who, { api_key: `LIMITkey${String(i).padStart(12, '0')}`, api_secret: 'limit-secret-0123456' })
      const over = await call(who, 'POST', '/v1/exchange-keys', { api_key: 'LIMITkey999999999999', api_secret: 'limit-secret-0123456' })
      assert.equal(over.statusCode, 429)
      assert.equal(over.json().error.code, 'LIMIT_REACHED')
      assert.equal(((await call(who, 'GET', '/v1/exchange-keys')).json().data as unknown[]).length, 10)
    })
  })

  describe(`email lookup of the registered key (${backend})`, () => {
    let t: TestApp
    let replay: ReplayExchange
    let ip = 1
    before(async () => {
      ;({ t, replay } = await startWithExchange(backend))
    })
    after(async () => {
      await t.close()
      await replay.close()
    })

    // Each test from its own loopback address, so the per-IP lookup budget of one does not spill over.
    const from = () => `127.0.0.${++ip}`
    const status = (email: string, remoteAddress = from()) => t.app.inject({ method: 'GET', url: `/api-key/status/${encodeURIComponent(email)}`, remoteAddress })
    const verify = (email: unknown, remoteAddress = from()) => t.app.inject({ method: 'POST', url: '/api-key/verify', payload: { email } as object, remoteAddress })
    const registered = async (email: string, credentials = GOOD) => {
      const who = await signIn(t, email)
      const res = await t.app.inject({ method: 'POST', url: '/v1/exchange-keys', headers: who.headers, payload: credentials })
      assert.equal(res.statusCode, 200, res.body)
      return res.json() as Record<string, unknown>
    }

    it('answers an unknown email and an email without a key alike: success false, has_api_key false', async () => {
      const unknown = await status('nobody@example.test')
      assert.equal(unknown.statusCode, 200)
      assert.deepEqual(unknown.json(), { success: false, message: 'user or API key does not exist', email: 'nobody@example.test', has_api_key: false })
      await signIn(t, 'keyless@example.test')
      const keyless = await status('keyless@example.test')
      assert.deepEqual({ ...(keyless.json() as object), email: undefined }, { ...(unknown.json() as object), email: undefined })
      const verified = await verify('keyless@example.test')
      assert.deepEqual(verified.json(), { success: false, message: 'user or API key does not exist', email: 'keyless@example.test', has_api_key: false })
    })

    it('reports the registered key with exactly the spec fields, times without zone', async () => {
      const key = await registered('status@example.test')
      const res = await status('Status@Example.TEST')
      assert.equal(res.statusCode, 200)
      const body = res.json() as Record<string, unknown>
      assert.deepEqual(Object.keys(body).sort(), ['created_at', 'email', 'has_api_key', 'is_active', 'last_verified', 'message', 'success', 'verification_status'])
      assert.equal(body.success, true)
      assert.equal(body.has_api_key, true)
      assert.equal(body.email, 'status@example.test')
      assert.equal(body.verification_status, 'verified')
      assert.equal(body.is_active, true)
      assert.match(String(body.created_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/)
      assert.equal(`${String(body.created_at).slice(0, 23)}Z`, key.created_at)
      assert.equal(`${String(body.last_verified).slice(0, 23)}Z`, key.last_verified)
    })

    it('verify re-checks the key with the exchange, at most once a minute', async () => {
      await registered('verify@example.test')
      const calls = () => replay.stats().byPath[ACCOUNT_PATH] ?? 0
      const before = calls()
      const soon = await verify('verify@example.test')
      assert.equal(soon.statusCode, 200)
      assert.deepEqual(Object.keys(soon.json()).sort(), ['email', 'has_api_key', 'message', 'success'])
      assert.equal(soon.json().success, true)
      assert.equal(calls(), before, 'checked at registration less than a minute ago')
      t.clock.advance(60_001)
      const later = await verify('verify@example.test')
      assert.deepEqual(later.json(), { success: true, message: 'API key verified with the exchange', email: 'verify@example.test', has_api_key: true })
      assert.equal(calls(), before + 1)
    })

    it('reports a refused key: verify success false, status failed and inactive', async () => {
      await registered('refused@example.test', { api_key: GOOD.api_key, api_secret: `${GOOD.api_secret}-wrong` })
      t.clock.advance(60_001)
      const verified = await verify('refused@example.test')
      assert.deepEqual(verified.json(), {
        success: false,
        message: 'the exchange refused the API key (code -1022)',
        email: 'refused@example.test',
        has_api_key: true,
      })
      const res = (await status('refused@example.test')).json()
      assert.equal(res.verification_status, 'failed')
      assert.equal(res.is_active, false)
      assert.equal(res.success, true)
    })

    it('limits lookups to 30 per IP per minute (429 with Retry-After), counting both routes', async () => {
      // Start at the beginning of a window so the test cannot straddle two.
      t.clock.value = Math.ceil(t.clock.value / 60_000) * 60_000 + 1000
      const address = from()
      for (let i = 0; i < 15; i++) assert.equal((await status('nobody@example.test', address)).statusCode, 200)
      for (let i = 0; i < 15; i++) assert.equal((await verify('nobody@example.test', address)).statusCode, 200)
      const limited = await status('nobody@example.test', address)
      assert.equal(limited.statusCode, 429)
      assert.match(limited.json().detail, /per minute/)
      assert.ok(Number(limited.headers['retry-after']) >= 1)
      assert.equal((await status('nobody@example.test', from())).statusCode, 200, 'another address has its own budget')
    })

    it('refuses a malformed email with 422 in the FastAPI shape', async () => {
      for (const email of ['not-an-email', 'a b@example.test', 'x@y']) {
        const path = await status(email)
        assert.equal(path.statusCode, 422, email)
        assert.deepEqual(path.json().detail[0].loc, ['path', 'email'])
        const body = await verify(email)
        assert.equal(body.statusCode, 422, email)
        assert.deepEqual(body.json().detail[0].loc, ['body', 'email'])
      }
      const missing = await t.app.inject({ method: 'POST', url: '/api-key/verify', payload: {}, remoteAddress: from() })
      assert.equal(missing.statusCode, 422)
      assert.equal(missing.json().detail[0].type, 'missing')
    })
  })
}
