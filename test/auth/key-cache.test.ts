import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { newApiKeyCredentials } from '../../src/auth/api-keys.js'
import { findOrCreateUserByEmail, insertApiKey } from '../../src/auth/queries.js'
import type { Db } from '../../src/db/connect.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { type SignedInUser, signIn } from './bearer.js'

/** Polls `check` until it holds; fails after `ms` (no sleeps standing in for a wait). */
async function eventually(check: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`)
    await new Promise((resolve) => setImmediate(resolve))
  }
}

// Two nodes over one PostgreSQL server: each caches API keys, and learns of the other's changes by NOTIFY.
for (const backend of backends().filter((b) => b === 'postgres')) {
  describe(`API key cache across nodes (${backend})`, () => {
    let a: TestApp
    let b: TestApp
    let user: SignedInUser
    before(async () => {
      a = await startTestApp(backend)
      b = await startTestApp(backend, {}, { database: a.database })
      b.clock.value = a.clock.value
      user = await signIn(a)
    })
    after(async () => {
      await b.close()
      await a.close()
    })

    const create = async (name: string): Promise<KeyPair> => {
      const res = await a.app.inject({ method: 'POST', url: '/v1/api-keys', headers: user.headers, payload: { name, scopes: ['strategies:read'] } })
      assert.equal(res.statusCode, 200, res.body)
      const body = res.json() as { id: string; secret: string }
      return { api_key: body.id, api_secret: body.secret }
    }
    const statusOn = async (node: TestApp, pair: KeyPair) => (await node.signed(pair, 'GET', '/v1/strategies')).statusCode

    it('a key revoked on one node stops working on the other without waiting for the cache to expire', async () => {
      const pair = await create('revoked elsewhere')
      assert.equal(await statusOn(b, pair), 200) // b now holds the key
      assert.equal((await a.app.inject({ method: 'DELETE', url: `/v1/api-keys/${pair.api_key}`, headers: user.headers })).statusCode, 204)
      assert.equal(await statusOn(a, pair), 401, 'at once on the node that revoked it')
      // b's clock stands still, so its 5 s expiry never comes: only the notification can drop the entry.
      await eventually(async () => (await statusOn(b, pair)) === 401, 3000, 'b refuses the revoked key')
    })

    it('a key rotated on one node signs with the new secret only, on the other', async () => {
      const pair = await create('rotated elsewhere')
      assert.equal(await statusOn(b, pair), 200)
      const rotated = await a.app.inject({ method: 'POST', url: `/v1/api-keys/${pair.api_key}/rotate`, headers: user.headers })
      assert.equal(rotated.statusCode, 200, rotated.body)
      const fresh = { api_key: pair.api_key, api_secret: (rotated.json() as { secret: string }).secret }
      await eventually(async () => (await statusOn(b, pair)) === 401, 3000, 'b refuses the old secret')
      assert.equal(await statusOn(b, fresh), 200)
    })

    it('a change made in SQL, outside the API, reaches the cache too (the trigger announces it)', async () => {
      const pair = await create('revoked by an operator')
      assert.equal(await statusOn(b, pair), 200)
      await sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${pair.api_key}`.execute(a.database.handle.db)
      await eventually(async () => (await statusOn(b, pair)) === 401, 3000, 'b refuses the key revoked in SQL')
    })

    it('caches: a key whose row changes without notice keeps working until the entry expires', async () => {
      // Triggers off for these writes (superuser, this transaction only): nothing announces them.
      const unannounced = (write: (trx: Db) => Promise<unknown>) =>
        a.database.handle.db.transaction().execute(async (trx) => {
          await sql`SET LOCAL session_replication_role = replica`.execute(trx)
          await write(trx)
        })
      const pair = newApiKeyCredentials()
      await unannounced(async (trx) => {
        const userId = await findOrCreateUserByEmail(trx, 'cached@example.test')
        await insertApiKey(trx, { id: pair.id, userId, name: '', scopes: ['strategies:read'], secretEnc: a.services.secrets.seal(pair.secret) })
      })
      const key = { api_key: pair.id, api_secret: pair.secret }
      assert.equal(await statusOn(b, key), 200)
      await unannounced((trx) => sql`UPDATE api_keys SET revoked_at = now() WHERE id = ${pair.id}`.execute(trx))
      assert.equal(await statusOn(b, key), 200, 'served from the cache')
      b.clock.advance(5_001)
      assert.equal(await statusOn(b, key), 401, 'read again once the entry expired')
    })
  })
}
