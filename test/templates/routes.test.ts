import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'

for (const backend of backends()) {
  describe(`GET /v1/templates (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    before(async () => {
      t = await startTestApp(backend)
      key = await t.createKey([])
    })
    after(() => t.close())

    it('lists every template with its params schema, defaults and minimum capital to any signed caller', async () => {
      const res = await t.signed(key, 'GET', '/v1/templates')
      assert.equal(res.statusCode, 200, res.body)
      const { data } = res.json() as { data: Record<string, unknown>[] }
      assert.equal(data.length, 8)
      const sma = data.find((entry) => entry.id === 'sma_cross')!
      assert.deepEqual(sma.defaults, { fast: 10, slow: 30, allow_short: false })
      assert.equal(sma.multi_symbol, false)
      assert.equal(sma.min_capital, '200')
      const schema = sma.params_schema as { properties: Record<string, { type: string; minimum: number; maximum: number; default: unknown }> }
      assert.deepEqual(
        { type: schema.properties.fast!.type, minimum: schema.properties.fast!.minimum, maximum: schema.properties.fast!.maximum },
        { type: 'integer', minimum: 2, maximum: 999 },
      )
      const momentum = data.find((entry) => entry.id === 'cross_sectional_momentum')!
      assert.equal(momentum.multi_symbol, true)
      assert.equal(momentum.min_symbols, 2)
      assert.equal(res.headers['x-service-used-weight-1m'] !== undefined, true, 'charged against the weight budget')
    })

    it('refuses unsigned requests', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/templates' })
      assert.equal(res.statusCode, 401)
      assert.equal(res.json().error.code, 'UNAUTHENTICATED')
    })

    it('is in the OpenAPI document', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/openapi.json' })
      assert.ok(res.json().paths['/v1/templates'].get)
    })
  })
}
