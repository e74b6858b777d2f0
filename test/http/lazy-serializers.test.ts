import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { describe, it } from 'node:test'
import Fastify from 'fastify'
import { buildApp } from '../../src/app.js'
import { loadConfig } from '../../src/config.js'
import { connectDatabase } from '../../src/db/connect.js'
import { LazySerializers } from '../../src/http/lazy-serializers.js'
import { createServices } from '../../src/services.js'

function appWith(serializers: LazySerializers, response: Record<string, unknown>) {
  const app = Fastify({ exposeHeadRoutes: false, schemaController: { compilersFactory: { buildSerializer: serializers.build } } })
  app.get('/thing', { schema: { response } }, async () => ({ name: 'kept', secret: 'dropped', count: '7' }))
  return app
}

const THING = { 200: { type: 'object', properties: { name: { type: 'string' }, count: { type: 'integer' } } } }

describe('LazySerializers', () => {
  it('compiles a response schema at its first response, and serializes by it (unknown fields dropped, types coerced)', async () => {
    const serializers = new LazySerializers()
    const app = appWith(serializers, { ...THING, 404: { type: 'object', properties: { error: { type: 'string' } } } })
    await app.ready()
    assert.equal(serializers.pendingCount, 2)
    for (let i = 0; i < 2; i++) {
      const response = await app.inject({ method: 'GET', url: '/thing' })
      assert.equal(response.statusCode, 200)
      assert.equal(response.body, '{"name":"kept","count":7}')
      assert.equal(serializers.pendingCount, 1)
    }
    assert.equal(serializers.compileAll(), 1)
    assert.equal(serializers.pendingCount, 0)
    await app.close()
  })

  it('reports a schema that does not compile, with its route, when compileAll runs', async () => {
    const serializers = new LazySerializers()
    const app = appWith(serializers, { 200: { type: 'object', properties: { name: { $ref: '#/definitions/missing' } } } })
    await app.ready()
    assert.throws(() => serializers.compileAll(), /the response schema of GET \/thing 200 does not compile/)
    await app.close()
  })

  it("compiles every response schema of every route of the app (what ready() used to do)", async () => {
    const key = () => crypto.randomBytes(32).toString('base64')
    const config = loadConfig({ DATABASE_URL: 'postgres://127.0.0.1:1/never-connected', UPSTREAM_URL: 'http://127.0.0.1:1', MASTER_KEY: key(), APP_JWT_SECRET: key(), LOG_LEVEL: 'silent' })
    const database = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, poolMax: 1 })
    const services = createServices(config, database)
    const serializers = new LazySerializers()
    const app = await buildApp(services, { serializers })
    try {
      await app.ready()
      const pending = serializers.pendingCount
      assert.ok(pending > 100, `only ${pending} response serializers`)
      assert.equal(serializers.compileAll(), pending)
    } finally {
      await app.close()
      await services.webhooks.close()
      await services.sandbox.close()
      await services.market.close()
      await database.close()
    }
  })
})
