import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { JWTPayload } from 'jose'
import { setPlan } from '../../src/auth/plans.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { IDPA, IDPB, idpEnv, JwksServer, makeProviderKey, type ProviderKey, signToken } from './identity-support.js'

for (const backend of backends()) {
  describe(`sign-in linking and the second provider (${backend})`, () => {
    let t: TestApp
    let jwksA: JwksServer
    let jwksB: JwksServer
    let keyA: ProviderKey
    let keyB: ProviderKey

    before(async () => {
      keyA = await makeProviderKey('a-1')
      keyB = await makeProviderKey('b-1')
      jwksA = await JwksServer.start([keyA])
      jwksB = await JwksServer.start([keyB])
      t = await startTestApp(backend, {
        ...idpEnv('IDPA', IDPA.issuer, IDPA.audience, jwksA.url),
        ...idpEnv('IDPB', IDPB.issuer, IDPB.audience, jwksB.url),
      })
    })
    after(async () => {
      await t.close()
      await jwksA.close()
      await jwksB.close()
    })

    const idpa = async (claims: JWTPayload) => {
      const token = await signToken(keyA, { iss: IDPA.issuer, aud: IDPA.audience, email_verified: true, ...claims }, t.clock.now())
      return t.app.inject({ method: 'POST', url: '/auth/mobile/idpa', payload: { id_token: token } })
    }
    const idpb = async (claims: JWTPayload) => {
      const token = await signToken(keyB, { iss: IDPB.issuer, aud: IDPB.audience, ...claims }, t.clock.now())
      return t.app.inject({ method: 'POST', url: '/auth/mobile/idpb', payload: { identity_token: token } })
    }
    const users = (email: string) => t.database.handle.db.selectFrom('users').selectAll().where('email', '=', email).execute()

    it('links an existing user by verified email, attaching the subject, and by subject afterwards', async () => {
      await t.createKey(['strategies:read'], 'trader@example.test')
      const [existing] = await users('trader@example.test')
      const first = await idpa({ sub: 'a-trader', email: 'Trader@Example.test', name: 'Trader' })
      assert.equal(first.statusCode, 200, first.body)
      assert.equal(first.json().user.id, existing!.id)
      assert.equal(first.json().user.idpa_id, 'a-trader')
      assert.equal(first.json().user.name, 'Trader', 'an empty name is filled from the token')
      // The second provider's first token carries the same email: the same user again.
      const second = await idpb({ sub: 'b-trader', email: 'trader@example.test', email_verified: 'true' })
      assert.equal(second.statusCode, 200, second.body)
      assert.equal(second.json().user.id, existing!.id)
      assert.equal(second.json().user.idpa_id, 'a-trader')
      assert.equal(second.json().user.idpb_id, 'b-trader')
      // Later idpb tokens carry no email: matched by subject.
      const later = await idpb({ sub: 'b-trader' })
      assert.equal(later.statusCode, 200, later.body)
      assert.equal(later.json().user.id, existing!.id)
      // The idpa subject wins over a changed email: still that user, email unchanged.
      const renamed = await idpa({ sub: 'a-trader', email: 'new-address@example.test' })
      assert.equal(renamed.json().user.id, existing!.id)
      assert.equal(renamed.json().user.email, 'trader@example.test')
      assert.equal((await users('trader@example.test')).length, 1)
      assert.equal((await users('new-address@example.test')).length, 0)
    })

    it('creates an idpb user with a private relay address and email_verified as a boolean', async () => {
      const relay = 'x7q2k9@privaterelay.appleid.com'
      const res = await idpb({ sub: 'b-relay', email: relay, email_verified: true, is_private_email: 'true' })
      assert.equal(res.statusCode, 200, res.body)
      assert.equal(res.json().user.email, relay)
      assert.equal(res.json().user.idpb_id, 'b-relay')
      assert.equal(res.json().user.idpa_id, null)
      assert.equal(res.json().user.name, '')
    })

    it('refuses an idpb token without email for an unknown subject, and an unverified email', async () => {
      const unknown = await idpb({ sub: 'b-never-seen' })
      assert.equal(unknown.statusCode, 401)
      assert.match(unknown.json().detail, /has not signed in before and its token carries no email address/)
      for (const email_verified of ['false', false, undefined]) {
        const res = await idpb({ sub: 'b-unverified', email: 'unverified@example.test', email_verified })
        assert.equal(res.statusCode, 401, `email_verified ${String(email_verified)}`)
        assert.match(res.json().detail, /not verified/)
      }
      assert.equal((await users('unverified@example.test')).length, 0)
    })

    it('refuses to take over a user already linked to another subject of the same provider', async () => {
      assert.equal((await idpa({ sub: 'a-owner', email: 'owned@example.test' })).statusCode, 200)
      const other = await idpa({ sub: 'a-intruder', email: 'owned@example.test' })
      assert.equal(other.statusCode, 401)
      assert.match(other.json().detail, /already belongs to a user linked to another idpa account/)
      const [row] = await users('owned@example.test')
      assert.equal(row!.idpa_id, 'a-owner')
    })

    it('makes one user of concurrent first sign-ins', async () => {
      const results = await Promise.all(Array.from({ length: 6 }, () => idpa({ sub: 'a-racer', email: 'racer@example.test' })))
      for (const res of results) assert.equal(res.statusCode, 200, res.body)
      assert.equal(new Set(results.map((res) => res.json().user.id)).size, 1)
      assert.equal((await users('racer@example.test')).length, 1)
      // And concurrent sign-ins of one existing user through both providers at once.
      await t.createKey(['strategies:read'], 'both@example.test')
      const both = await Promise.all([
        idpa({ sub: 'a-both', email: 'both@example.test' }),
        idpb({ sub: 'b-both', email: 'both@example.test', email_verified: 'true' }),
      ])
      const [row] = await users('both@example.test')
      assert.deepEqual(both.map((res) => res.json().user.id), [row!.id, row!.id])
      assert.equal(row!.idpa_id, 'a-both')
      assert.equal(row!.idpb_id, 'b-both')
    })

    it('reports an active plan as is_vip with vip_expires_at in ISO 8601 without zone', async () => {
      const end = new Date(t.clock.now() + 30 * 86_400_000)
      end.setUTCMilliseconds(0)
      await setPlan(t.database.handle.db, 'vip@example.test', 'pro', end, t.clock.now())
      const res = await idpa({ sub: 'a-vip', email: 'vip@example.test' })
      assert.equal(res.json().user.is_vip, true)
      assert.equal(res.json().user.vip_expires_at, `${end.toISOString().slice(0, 19)}.000000`)
      t.clock.advance(31 * 86_400_000)
      const expired = await idpa({ sub: 'a-vip', email: 'vip@example.test' })
      assert.equal(expired.json().user.is_vip, false)
      assert.equal(expired.json().user.vip_expires_at, `${end.toISOString().slice(0, 19)}.000000`)
    })
  })
}
