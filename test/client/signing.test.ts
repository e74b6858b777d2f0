import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { signRequest as serverSign } from '../../src/auth/request-signature.js'
import { hmacKey, PerpetuaClient, PerpetuaError, signRequest } from '../../src/client/index.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { type ClientServer, recordingFetch, startClientServer } from './server.js'

describe('client request signing (WebCrypto)', () => {
  it('computes exactly the signature the server checks (node:crypto), for any method, path, query and body', async () => {
    const bodies = ['', '{}', '{"name":"é ü 策略 🚀"}', JSON.stringify({ params: { fast: 3 }, symbols: ['BTCUSDT'] })]
    for (let i = 0; i < 40; i++) {
      const secret = crypto.randomBytes(32).toString('base64url')
      const timestamp = String(1_700_000_000_000 + i)
      const method = ['GET', 'post', 'PATCH', 'delete'][i % 4]!
      const path = `/v1/backtest/jobs?limit=${i}&cursor=${encodeURIComponent(crypto.randomBytes(6).toString('base64'))}`
      const body = bodies[i % bodies.length]!
      assert.equal(await signRequest(await hmacKey(secret), timestamp, method, path, body), serverSign(secret, timestamp, method, path, body))
    }
  })
})

for (const backend of backends()) {
  describe(`the client against a running server: signing and errors (${backend})`, () => {
    let server: ClientServer
    let key: KeyPair
    before(async () => {
      server = await startClientServer(backend)
      key = await server.t.createKey(['strategies:read', 'strategies:write', 'backtests:read'])
    })
    after(() => server.close())

    it('signs GETs with a query and POSTs with a body so that the server accepts them', async () => {
      const client = server.client(key)
      const created = await client.strategies.create({ name: 'signed é', template_id: 'sma_cross', params: { fast: 5, slow: 20 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' })
      assert.match(created.id, /^strat_[0-9a-f]{8}$/)
      assert.equal(created.status, 'draft')
      const page = await client.strategies.list({ limit: 1, status: 'draft' })
      assert.deepEqual(page.data.map((s) => s.id), [created.id])
      // Identical requests in the same millisecond still differ (the server refuses a replayed signature).
      const same = await Promise.all([client.strategies.get(created.id), client.strategies.get(created.id)])
      assert.deepEqual(same.map((s) => s.name), ['signed é', 'signed é'])
    })

    it('turns a wrong secret into the API’s 401 INVALID_SIGNATURE, with message and request id', async () => {
      const client = server.client({ api_key: key.api_key, api_secret: crypto.randomBytes(32).toString('base64url') })
      const error = await client.strategies.list().then(() => assert.fail('a wrong secret was accepted'), (e: unknown) => e)
      assert.ok(error instanceof PerpetuaError, String(error))
      assert.equal(error.status, 401)
      assert.equal(error.code, 'INVALID_SIGNATURE')
      assert.match(error.message, /signature does not match/)
      assert.match(error.request_id ?? '', /^[0-9a-f-]{36}$/)
    })

    it('reports a clock far from the server’s as TIMESTAMP_EXPIRED', async () => {
      // A key of its own: the client keeps each key's timestamps increasing, so a key that signed on the
      // right clock before would carry on from there.
      const fresh = await server.t.createKey(['strategies:read'])
      const client = server.client(fresh, { now: () => server.t.clock.now() - 60_000 })
      await assert.rejects(client.strategies.list(), (e: PerpetuaError) => e.status === 401 && e.code === 'TIMESTAMP_EXPIRED')
    })

    it('carries the API’s field and code for a bad parameter, and 404 NOT_FOUND for another user’s id', async () => {
      const client = server.client(key)
      await assert.rejects(client.backtests.list({ limit: 500 }), (e: PerpetuaError) => e.status === 400 && e.code === 'INVALID_PARAMETER' && e.field === 'limit')
      const stranger = server.client(await server.t.createKey(['strategies:read', 'strategies:write']))
      const theirs = await stranger.strategies.create({ name: 'theirs', template_id: 'sma_cross', params: {}, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' })
      await assert.rejects(client.strategies.get(theirs.id), (e: PerpetuaError) => e.status === 404 && e.code === 'NOT_FOUND')
    })

    it('gives the missing scope as 403 INSUFFICIENT_PERMISSION', async () => {
      const client = server.client(key)
      await assert.rejects(client.webhooks.list(), (e: PerpetuaError) => e.status === 403 && e.code === 'INSUFFICIENT_PERMISSION')
    })

    it('reads public FastAPI-style errors too (detail text, 422 lists with the field)', async () => {
      const client = server.client(key)
      await assert.rejects(client.get('/strategies/{strategy_id}', { path: { strategy_id: 999_999 } }), (e: PerpetuaError) => e.status === 404 && e.message === '策略不存在')
      await assert.rejects(
        client.post('/strategies', { body: { name: 7 as unknown as string } }),
        (e: PerpetuaError) => e.status === 422 && e.field === 'name' && e.code === 'HTTP_422',
      )
    })

    it('signs only /v1 requests, and sends a Bearer app token instead of a key when given one', async () => {
      const recorder = recordingFetch()
      const userId = (await server.t.database.handle.db.selectFrom('api_keys').select('user_id').where('id', '=', key.api_key).executeTakeFirstOrThrow()).user_id
      const token = await server.t.services.tokens.issue(userId, server.t.clock.now())
      const client = new PerpetuaClient({ baseUrl: server.baseUrl, token, fetch: recorder.fetch })
      const mine = await client.strategies.list({ limit: 100 })
      assert.ok(mine.data.some((s) => s.name === 'signed é'))
      assert.equal(recorder.calls[0]!.status, 200)
      const bad = new PerpetuaClient({ baseUrl: server.baseUrl, token: `${token}x` })
      await assert.rejects(bad.strategies.list(), (e: PerpetuaError) => e.status === 401 && e.code === 'UNAUTHENTICATED')
    })

    it('reports an unreachable server as NETWORK_ERROR (status 0)', async () => {
      const client = new PerpetuaClient({ baseUrl: 'http://127.0.0.1:1', apiKey: key.api_key, apiSecret: key.api_secret })
      await assert.rejects(client.strategies.list(), (e: PerpetuaError) => e instanceof PerpetuaError && e.status === 0 && e.code === 'NETWORK_ERROR')
    })
  })
}
