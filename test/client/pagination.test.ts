import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { type ClientServer, recordingFetch, startClientServer } from './server.js'

const COUNT = 23
const PAGE = 5

for (const backend of backends()) {
  describe(`the client iterates cursor lists (${backend})`, () => {
    let server: ClientServer
    let key: KeyPair
    before(async () => {
      server = await startClientServer(backend)
      key = await server.t.createKey(['strategies:read', 'strategies:write'])
    })
    after(() => server.close())

    it(`walks every page of ${COUNT} strategies, ${PAGE} at a time, with no duplicates and none missing, newest first`, async () => {
      const client = server.client(key)
      const created: string[] = []
      for (let i = 0; i < COUNT; i++) {
        server.t.clock.advance(10) // distinct created_at, so "newest first" is a strict order
        const strategy = await client.strategies.create({ name: `s${i}`, template_id: 'sma_cross', params: {}, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' })
        created.push(strategy.id)
      }
      const recorder = recordingFetch()
      const seen: string[] = []
      for await (const strategy of server.client(key, { fetch: recorder.fetch }).strategies.iterate({ limit: PAGE })) seen.push(strategy.id)
      assert.equal(new Set(seen).size, seen.length, 'an item came twice')
      assert.deepEqual(seen, [...created].reverse())
      assert.equal(recorder.calls.length, Math.ceil(COUNT / PAGE))
      assert.ok(recorder.calls.slice(1).every((call) => new URL(call.url).searchParams.has('cursor')))
    })

    it('stops early when the caller breaks, fetching no further page', async () => {
      const recorder = recordingFetch()
      const client = server.client(key, { fetch: recorder.fetch })
      let taken = 0
      for await (const _ of client.iterate('/v1/strategies', { query: { limit: PAGE } })) if (++taken === PAGE + 1) break
      assert.equal(recorder.calls.length, 2)
    })
  })
}
