import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { JWTPayload } from 'jose'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import {
  deadUrl,
  IDPA,
  idpEnv,
  JwksServer,
  makeProviderKey,
  type ProviderKey,
  publicKeyHmacToken,
  signToken,
  unsignedToken,
} from './identity-support.js'

const NAIVE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}$/
const TTL_S = 120
let subjects = 0

for (const backend of backends()) {
  describe(`POST /auth/mobile/idpa (${backend})`, () => {
    let t: TestApp
    let jwks: JwksServer
    let key: ProviderKey

    before(async () => {
      key = await makeProviderKey('key-1')
      jwks = await JwksServer.start([key])
      t = await startTestApp(backend, {
        ...idpEnv('IDPA', `https://other.example, ${IDPA.issuer}`, `${IDPA.audience},${IDPA.otherAudience}`, jwks.url),
        APP_JWT_TTL: String(TTL_S),
      })
    })
    after(async () => {
      await t.close()
      await jwks.close()
    })

    /** Claims of a fresh idpa user; each call a new subject and email. */
    function claims(overrides: JWTPayload = {}): JWTPayload {
      const n = ++subjects
      return { iss: IDPA.issuer, aud: IDPA.audience, sub: `1100${n}`, email: `person${n}@gmail.example`, email_verified: true, name: `Person ${n}`, ...overrides }
    }
    const token = (overrides: JWTPayload = {}, signer = key) => signToken(signer, claims(overrides), t.clock.now())
    const signIn = (idToken: unknown) => t.app.inject({ method: 'POST', url: '/auth/mobile/idpa', payload: { id_token: idToken } })
    const userCount = async () => Number((await t.database.handle.db.selectFrom('users').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

    async function assertRefused(idToken: string, status: number, detail: RegExp): Promise<void> {
      const users = await userCount()
      const res = await signIn(idToken)
      assert.equal(res.statusCode, status, res.body)
      assert.deepEqual(Object.keys(res.json()), ['detail'])
      assert.match(res.json().detail, detail)
      assert.equal(await userCount(), users, 'no user was created')
    }

    it('signs a new user in with a valid token and returns the spec’s user object', async () => {
      const res = await signIn(await token({ sub: 'sub-valid', email: 'Valid.Person@Gmail.example', name: 'Valid Person' }))
      assert.equal(res.statusCode, 200, res.body)
      const { access_token, user } = res.json()
      assert.deepEqual(Object.keys(user).sort(), ['created_at', 'email', 'id', 'idpa_id', 'idpb_id', 'is_vip', 'name', 'updated_at', 'vip_expires_at'])
      assert.ok(Number.isInteger(user.id))
      assert.equal(user.email, 'valid.person@gmail.example')
      assert.equal(user.name, 'Valid Person')
      assert.equal(user.idpa_id, 'sub-valid')
      assert.equal(user.idpb_id, null)
      assert.equal(user.is_vip, false)
      assert.equal(user.vip_expires_at, null)
      assert.match(user.created_at, NAIVE_TIME)
      assert.match(user.updated_at, NAIVE_TIME)
      // The app token is a Bearer credential on /v1 for this very user.
      const me = await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: { authorization: `Bearer ${access_token}` } })
      assert.equal(me.statusCode, 200, me.body)
      assert.equal(await t.services.tokens.verify(access_token, t.clock.now()), user.id)
      // Signing in again is the same user, not a second one.
      const again = await signIn(await token({ sub: 'sub-valid', email: 'valid.person@gmail.example' }))
      assert.equal(again.json().user.id, user.id)
    })

    it('accepts every configured audience and issuer, as a string or within an aud array', async () => {
      for (const aud of [IDPA.otherAudience, ['someone-else', IDPA.audience]]) {
        const res = await signIn(await token({ aud }))
        assert.equal(res.statusCode, 200, res.body)
      }
      assert.equal((await signIn(await token({ iss: 'https://other.example' }))).statusCode, 200)
    })

    it('refuses an expired token with 401, and allows 60 s of skew', async () => {
      const now = Math.floor(t.clock.now() / 1000)
      await assertRefused(await token({ iat: now - 3700, exp: now - 61 }), 401, /idpa token is invalid: it expired/)
      const withinSkew = await signIn(await token({ iat: now - 3700, exp: now - 50 }))
      assert.equal(withinSkew.statusCode, 200, withinSkew.body)
      await assertRefused(await token({ iat: now + 120, exp: now + 3600 }), 401, /issued in the future/)
      await assertRefused(await token({ nbf: now + 120 }), 401, /not valid yet/)
      await assertRefused(await token({ exp: undefined }), 401, /no expiry/)
    })

    it('refuses a wrong issuer or audience with 401', async () => {
      await assertRefused(await token({ iss: 'https://evil.example' }), 401, /issuer "https:\/\/evil.example" is not accepted/)
      await assertRefused(await token({ aud: 'another-app' }), 401, /audience "another-app" is not this app/)
      await assertRefused(await token({ aud: [] }), 401, /audience/)
    })

    it('refuses an unverified or missing email with 401', async () => {
      await assertRefused(await token({ email_verified: false }), 401, /email address is not verified/)
      await assertRefused(await token({ email_verified: undefined }), 401, /email address is not verified/)
      await assertRefused(await token({ email: undefined }), 401, /carries no email address/)
    })

    it('refuses alg none and HS256 signed with the provider’s public key', async () => {
      await assertRefused(unsignedToken(claims()), 401, /only RS256 signatures are accepted, not "none"/)
      await assertRefused(await publicKeyHmacToken(key, { ...claims(), iat: Math.floor(t.clock.now() / 1000), exp: Math.floor(t.clock.now() / 1000) + 600 }), 401, /not "HS256"/)
    })

    it('refuses a token signed by another key under a known kid, and junk', async () => {
      const impostor = await makeProviderKey('key-1')
      await assertRefused(await token({}, impostor), 401, /signature does not verify/)
      await assertRefused('not-a-jwt', 401, /not a JWT/)
    })

    it('answers 422 in FastAPI’s shape for a missing or wrong-typed id_token', async () => {
      const missing = await t.app.inject({ method: 'POST', url: '/auth/mobile/idpa', payload: {} })
      assert.equal(missing.statusCode, 422)
      assert.deepEqual(missing.json().detail[0], { type: 'missing', loc: ['body', 'id_token'], msg: 'Field required' })
      const wrongType = await signIn(12345)
      assert.equal(wrongType.statusCode, 422)
      assert.deepEqual(wrongType.json().detail[0].loc, ['body', 'id_token'])
      assert.equal(wrongType.json().detail[0].type, 'string_type')
      const empty = await signIn('')
      assert.equal(empty.statusCode, 422, empty.body)
      assert.deepEqual(empty.json().detail[0], { type: 'string_too_short', loc: ['body', 'id_token'], msg: 'String should have at least 1 character' })
    })

    it('fetches the key set again for an unknown kid after a rotation, at most once per cooldown', async () => {
      assert.equal((await signIn(await token())).statusCode, 200)
      const before = jwks.fetches
      const rotated = await makeProviderKey('key-2')
      jwks.keys = [rotated]
      const res = await signIn(await token({}, rotated))
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(jwks.fetches, before + 1, 'one fetch for the new kid')
      // A made-up kid right after: refused without asking the provider again.
      await assertRefused(await signToken(rotated, claims(), t.clock.now(), 'made-up'), 401, /key the provider does not publish/)
      assert.equal(jwks.fetches, before + 1)
      // The new key keeps working from the cache; the old one is gone with the rotation.
      assert.equal((await signIn(await token({}, rotated))).statusCode, 200)
      await assertRefused(await token({}, key), 401, /key the provider does not publish/)
      assert.equal(jwks.fetches, before + 1)
      // Past the cooldown an unknown kid may cause one fetch again.
      t.clock.advance(31_000)
      await assertRefused(await signToken(rotated, claims(), t.clock.now(), 'made-up'), 401, /key the provider does not publish/)
      assert.equal(jwks.fetches, before + 2)
      key = rotated // the provider signs with the new key from now on
    })

    it('keeps verifying with the cached keys while the key set answers 500, and answers 503 when it must fetch', async () => {
      jwks.failing = true
      try {
        assert.equal((await signIn(await token())).statusCode, 200, 'known keys come from the cache')
        t.clock.advance(31_000)
        const fresh = await makeProviderKey('key-3')
        await assertRefused(await signToken(fresh, claims(), t.clock.now()), 503, /signing keys of idpa cannot be fetched/)
        // Inside the refetch cooldown the provider is not asked again, and it is still down: 503, not 401.
        const fetches = jwks.fetches
        t.clock.advance(1_000)
        await assertRefused(await signToken(fresh, claims(), t.clock.now()), 503, /signing keys of idpa cannot be fetched/)
        await assertRefused(await signToken(fresh, claims(), t.clock.now(), 'made-up'), 503, /signing keys of idpa cannot be fetched/)
        assert.equal(jwks.fetches, fetches, 'no fetch inside the cooldown')
        // Back up, past the cooldown: the new key is fetched and accepted.
        jwks.failing = false
        jwks.keys = [...jwks.keys, fresh]
        t.clock.advance(30_000)
        assert.equal((await signIn(await signToken(fresh, claims(), t.clock.now()))).statusCode, 200)
      } finally {
        jwks.failing = false
      }
    })

    it('accepts the app token as Bearer on /v1 until APP_JWT_TTL has passed, then answers 401', async () => {
      const res = await signIn(await token())
      const bearer = { authorization: `Bearer ${res.json().access_token}` }
      t.clock.advance((TTL_S - 1) * 1000)
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: bearer })).statusCode, 200)
      t.clock.advance(2000)
      const expired = await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: bearer })
      assert.equal(expired.statusCode, 401)
      assert.equal(expired.json().error.code, 'UNAUTHENTICATED')
      assert.match(expired.json().error.message, /invalid or expired/)
    })
  })
}

describe('POST /auth/mobile/idpa without a reachable key set', () => {
  let t: TestApp
  let key: ProviderKey

  before(async () => {
    key = await makeProviderKey('key-1')
    t = await startTestApp('pglite', idpEnv('IDPA', IDPA.issuer, IDPA.audience, await deadUrl()))
  })
  after(() => t.close())

  const signIn = (idToken: string) => t.app.inject({ method: 'POST', url: '/auth/mobile/idpa', payload: { id_token: idToken } })
  const claims = () => ({ iss: IDPA.issuer, aud: IDPA.audience, sub: 'down-1', email: 'down@gmail.example', email_verified: true })

  it('answers 503 for a good-looking token when the JWKS cannot be fetched', async () => {
    const res = await signIn(await signToken(key, claims(), t.clock.now()))
    assert.equal(res.statusCode, 503, res.body)
    assert.match(res.json().detail, /signing keys of idpa cannot be fetched/)
  })

  it('still answers 401 for tokens that are invalid on their face', async () => {
    const now = Math.floor(t.clock.now() / 1000)
    for (const bad of [
      await signToken(key, { ...claims(), iat: now - 7200, exp: now - 3600 }, t.clock.now()),
      await signToken(key, { ...claims(), aud: 'another-app' }, t.clock.now()),
      unsignedToken({ ...claims(), iat: now, exp: now + 600 }),
    ]) {
      const res = await signIn(bad)
      assert.equal(res.statusCode, 401, res.body)
    }
  })

  it('validates the body before finding the provider unconfigured: an empty or missing token is 422', async () => {
    for (const payload of [{ identity_token: '' }, {}, { identity_token: 'a b' }]) {
      const res = await t.app.inject({ method: 'POST', url: '/auth/mobile/idpb', payload })
      assert.equal(res.statusCode, 422, res.body)
      assert.deepEqual(res.json().detail[0].loc, ['body', 'identity_token'])
    }
  })

  it('answers 503 naming the settings when a provider is not configured', async () => {
    const res = await t.app.inject({ method: 'POST', url: '/auth/mobile/idpb', payload: { identity_token: 'a.b.c' } })
    assert.equal(res.statusCode, 503)
    assert.match(res.json().detail, /sign-in with idpb is not configured on this server: IDPB_JWKS_URL, IDPB_ISSUER, IDPB_AUDIENCE not set/)
  })
})
