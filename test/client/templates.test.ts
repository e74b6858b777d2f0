import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { PerpetuaError } from '../../src/client/index.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { MOMENTUM, SMA, SMA_TS } from '../custom-templates/modules.js'
import { type ClientServer, startClientServer } from './server.js'

for (const backend of backends()) {
  describe(`client.templates (${backend})`, () => {
    let server: ClientServer
    let key: KeyPair
    before(async () => {
      server = await startClientServer(backend)
      key = await server.t.createKey(['strategies:read', 'strategies:write'])
    })
    after(() => server.close())

    it('creates, lists, reads, updates and deletes a template over HTTP', async () => {
      const client = server.client(key)
      const created = await client.templates.create({ name: 'sma port', source: SMA, description: 'mine' })
      assert.deepEqual([created.custom, created.version, created.language, created.name], [true, 1, 'javascript', 'sma port'])

      const listed = await client.templates.list()
      assert.equal(listed.filter((t) => !t.custom).length, 8)
      assert.deepEqual(
        listed.filter((t) => t.custom).map((t) => t.id),
        [created.id],
      )

      const updated = await client.templates.update(created.id, { source: SMA_TS, language: 'typescript' })
      assert.deepEqual([updated.version, updated.language, updated.description], [2, 'typescript', 'mine'])

      const detail = await client.templates.get(created.id)
      assert.ok(detail.custom)
      assert.equal(detail.source, SMA_TS)
      assert.deepEqual(
        detail.versions.map((v) => v.version),
        [1, 2],
      )
      const first = await client.templates.get(created.id, 1)
      assert.ok(first.custom)
      assert.equal(first.source, SMA)
      const builtIn = await client.templates.get('sma_cross')
      assert.equal(builtIn.custom, false)

      assert.equal(await client.templates.delete(created.id), undefined)
      await assert.rejects(client.templates.get(created.id), (error: unknown) => error instanceof PerpetuaError && error.status === 404 && error.code === 'NOT_FOUND')
    })

    it("throws the API's refusals as PerpetuaError with code and field", async () => {
      const client = server.client(key)
      await assert.rejects(
        client.templates.create({ name: 'bad', source: 'export const params = 1' }),
        (error: unknown) => error instanceof PerpetuaError && error.status === 400 && error.code === 'INVALID_PARAMETER' && error.field === 'source',
      )
      await assert.rejects(
        client.templates.update('sma_cross', { source: MOMENTUM }),
        (error: unknown) => error instanceof PerpetuaError && error.status === 409 && error.code === 'INVALID_STATE',
      )
    })
  })
}
