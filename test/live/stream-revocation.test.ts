import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import WebSocket from 'ws'
import { findOrCreateUserByEmail } from '../../src/auth/queries.js'
import { publishMessage } from '../../src/live/stream/status-messages.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { poll } from '../support/poll.js'
import { type KeyPair, signedHeaders } from '../support/signing.js'

interface Stream {
  socket: WebSocket
  /** The `data.n` of each message published by this test, in arrival order (the first message, the status, is left out). */
  seen: number[]
  closed: Promise<{ code: number; reason: string; at: number }>
}

let published = 0
let users = 0

// Issue 37, item 2: a stream opened with a key (or a token, or a ticket either asked for) ends when that
// credential does, on every node, with a close code that says why, and no message committed after the
// revocation reaches it. On PostgreSQL the stream is served by a second node over the same database.
for (const backend of backends()) {
  describe(`a status stream ends with the credential that opened it (${backend})`, () => {
    let a: TestApp
    /** The node serving the streams: a second app over a's PostgreSQL database, or a itself on PGlite. */
    let b: TestApp
    let host: string
    before(async () => {
      a = await startTestApp(backend, {}, { replay: true, wallClock: true })
      b = backend === 'postgres' ? await startTestApp(backend, {}, { database: a.database, wallClock: true }) : a
      await b.app.listen({ host: '127.0.0.1', port: 0 })
      host = `127.0.0.1:${(b.app.server.address() as { port: number }).port}`
    })
    after(async () => {
      if (b !== a) await b.close()
      await a.close()
    })

    /** Bearer headers of the user; the token expires `ttlMs` from now when given (issued that much less than its lifetime ago). */
    const bearer = async (userId: number, ttlMs?: number) => {
      const ttl = a.services.config.appJwtTtlSeconds * 1000
      return { authorization: `Bearer ${await a.services.tokens.issue(userId, ttlMs === undefined ? a.clock.now() : a.clock.now() - ttl + ttlMs)}` }
    }
    /** A new signed-in user's bearer headers. */
    const signIn = async () => bearer(await findOrCreateUserByEmail(a.database.handle.db, `streams${++users}-${process.pid}@example.test`))
    const newKey = async (user: Record<string, string>): Promise<KeyPair> => {
      const res = await a.app.inject({ method: 'POST', url: '/v1/api-keys', headers: user, payload: { name: 'streams', scopes: ['strategies:read', 'strategies:write'] } })
      assert.equal(res.statusCode, 200, res.body)
      const body = res.json() as { id: string; secret: string }
      return { api_key: body.id, api_secret: body.secret }
    }
    const newStrategy = async (key: KeyPair): Promise<string> => {
      const body = { name: `watched ${++published}`, template_id: 'sma_cross', params: { fast: 3, slow: 8 }, symbols: ['BTCUSDT'], timeframe: '1m', capital: '1000' }
      const res = await a.signed(key, 'POST', '/v1/strategies', body)
      assert.equal(res.statusCode, 200, res.body)
      return (res.json() as { id: string }).id
    }
    /** Opens the stream on node b and waits for its first message (the status). */
    const open = (path: string, headers: Record<string, string> = {}) =>
      new Promise<Stream>((resolve, reject) => {
        const socket = new WebSocket(`ws://${host}${path}`, { headers })
        const seen: number[] = []
        let first = true
        const closed = new Promise<{ code: number; reason: string; at: number }>((done) => socket.on('close', (code, reason) => done({ code, reason: String(reason), at: performance.now() })))
        socket.on('message', (data) => {
          const message = JSON.parse(String(data)) as { type: string; data: { n?: number } }
          if (first) {
            first = false
            assert.equal(message.type, 'status')
            return resolve({ socket, seen, closed })
          }
          if (message.data.n !== undefined) seen.push(message.data.n)
        })
        socket.on('unexpected-response', (_request, response) => reject(Object.assign(new Error(`HTTP ${response.statusCode}`), { status: response.statusCode })))
        socket.on('error', reject)
      })
    const signedOpen = (key: KeyPair, id: string) => {
      const path = `/v1/strategies/${id}/stream`
      return open(path, signedHeaders(key, 'GET', path, '', b.clock.now()))
    }
    /** Publishes a message for the strategy as a runner does (NOTIFY at commit); resolves with its number once committed. */
    const publish = async (id: string): Promise<number> => {
      const n = ++published
      await publishMessage(a.database.handle.db, { type: 'order', strategy_id: id, time: new Date().toISOString(), data: { n } })
      return n
    }
    /** Publishes until the stream has the message: the stream is live. */
    const delivered = async (id: string, stream: Stream) => {
      const n = await publish(id)
      await poll(`message ${n} on the stream`, 5_000, () => (stream.seen.includes(n) ? true : undefined))
    }
    /** The stream's close within 5 s (the issue allows 1 s; a loaded test host gets slack, the report measures). */
    const closeOf = async (stream: Stream) => {
      const timeout = setTimeout(() => stream.socket.terminate(), 5_000)
      const closed = await stream.closed
      clearTimeout(timeout)
      return closed
    }

    it('a deleted key closes its streams with 4001 "api key revoked", and nothing committed after the delete reaches them', async (t) => {
      const user = await signIn()
      const key = await newKey(user)
      const other = await newKey(user)
      const id = await newStrategy(key)
      const stream = await signedOpen(key, id)
      const bystander = await signedOpen(other, id)
      await delivered(id, stream)
      const deleted = await a.app.inject({ method: 'DELETE', url: `/v1/api-keys/${key.api_key}`, headers: user })
      assert.equal(deleted.statusCode, 204)
      const committed = performance.now()
      const after = await publish(id) // committed after the revocation
      const closed = await closeOf(stream)
      t.diagnostic(`closed ${(closed.at - committed).toFixed(1)} ms after the delete's answer`)
      assert.deepEqual([closed.code, closed.reason], [4001, 'api key revoked'])
      assert.ok(!stream.seen.includes(after), 'a message committed after the revocation reached the revoked stream')
      await poll('the other key still follows', 5_000, () => (bystander.seen.includes(after) ? true : undefined))
      assert.equal(bystander.socket.readyState, WebSocket.OPEN)
      bystander.socket.close()
    })

    it("a rotated key closes the old secret's streams with 4002 \"api key rotated\"; one opened with the new secret stays", async (t) => {
      const user = await signIn()
      const key = await newKey(user)
      const id = await newStrategy(key)
      const stream = await signedOpen(key, id)
      await delivered(id, stream)
      const rotated = await a.app.inject({ method: 'POST', url: `/v1/api-keys/${key.api_key}/rotate`, headers: user })
      assert.equal(rotated.statusCode, 200, rotated.body)
      const committed = performance.now()
      const after = await publish(id)
      const closed = await closeOf(stream)
      t.diagnostic(`closed ${(closed.at - committed).toFixed(1)} ms after the rotation's answer`)
      assert.deepEqual([closed.code, closed.reason], [4002, 'api key rotated'])
      assert.ok(!stream.seen.includes(after))
      const fresh = await signedOpen({ api_key: key.api_key, api_secret: (rotated.json() as { secret: string }).secret }, id)
      await delivered(id, fresh)
      assert.equal(fresh.socket.readyState, WebSocket.OPEN)
      fresh.socket.close()
    })

    it('an app token\'s stream closes at the token\'s expiry with 4003 "app token expired"', async () => {
      const userId = await findOrCreateUserByEmail(a.database.handle.db, `streams${++users}-${process.pid}@example.test`)
      const id = await newStrategy(await newKey(await bearer(userId)))
      const stream = await open(`/v1/strategies/${id}/stream`, await bearer(userId, 1_500))
      await delivered(id, stream)
      const closed = await closeOf(stream)
      assert.deepEqual([closed.code, closed.reason], [4003, 'app token expired'])
      const after = await publish(id)
      await new Promise((resolve) => setImmediate(resolve))
      assert.ok(!stream.seen.includes(after))
    })

    it('a ticket-opened stream belongs to the key that asked for the ticket: its delete closes it, and a ticket of a revoked key opens nothing', async () => {
      const user = await signIn()
      const key = await newKey(user)
      const id = await newStrategy(key)
      const ticketFor = async () => {
        const res = await a.signed(key, 'POST', `/v1/strategies/${id}/stream-ticket`)
        assert.equal(res.statusCode, 200, res.body)
        return (res.json() as { ticket: string }).ticket
      }
      const stream = await open(`/v1/strategies/${id}/stream?ticket=${await ticketFor()}`)
      await delivered(id, stream)
      const unused = await ticketFor()
      assert.equal((await a.app.inject({ method: 'DELETE', url: `/v1/api-keys/${key.api_key}`, headers: user })).statusCode, 204)
      const after = await publish(id)
      const closed = await closeOf(stream)
      assert.deepEqual([closed.code, closed.reason], [4001, 'api key revoked'])
      assert.ok(!stream.seen.includes(after))
      await assert.rejects(open(`/v1/strategies/${id}/stream?ticket=${unused}`), (error: { status?: number }) => error.status === 401)
    })
  })
}
