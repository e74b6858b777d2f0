import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { SCOPES, type Scope } from '../../src/auth/scopes.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import { SMA } from '../custom-templates/modules.js'

const span = { start: '2023-01-01T00:00:00Z', end: '2023-03-31T23:00:00Z' }
const strategy = { name: 'scoped', template_id: 'sma_cross', params: { fast: 10, slow: 30 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '10000' }

/**
 * Issue 37's scope model: what a user's strategies hold (their custom templates in GET /v1/templates, a
 * stored strategy's params through a job's strategy_id) is read with strategies:read only, whatever
 * other scope a key holds. One user, one key per scope.
 */
for (const backend of backends()) {
  describe(`the scope model of strategies' data (${backend})`, () => {
    let t: TestApp
    const keys = new Map<Scope, KeyPair>()
    let strategyId: string
    let templateId: string

    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'queue' })
      const email = `scopes-${backend}@example.test`
      const all = await t.createKey([...SCOPES], email)
      for (const scope of SCOPES) keys.set(scope, await t.createKey([scope], email))
      const created = await t.signed(all, 'POST', '/v1/strategies', strategy)
      assert.equal(created.statusCode, 200, created.body)
      strategyId = created.json().id
      const template = await t.signed(all, 'POST', '/v1/templates', { name: 'secret sauce', source: SMA })
      assert.equal(template.statusCode, 201, template.body)
      templateId = template.json().id
    })
    after(() => t.close())

    it('lists the built-ins to every key, and custom templates only to a key holding strategies:read', async () => {
      for (const scope of SCOPES) {
        const res = await t.signed(keys.get(scope)!, 'GET', '/v1/templates')
        assert.equal(res.statusCode, 200, `${scope}: ${res.body}`)
        const data = res.json().data as { id: string; custom: boolean }[]
        assert.equal(data.filter((entry) => !entry.custom).length, 8, scope)
        assert.deepEqual(
          data.filter((entry) => entry.custom).map((entry) => entry.id),
          scope === 'strategies:read' ? [templateId] : [],
          `${scope} ${scope === 'strategies:read' ? 'reads' : 'must not read'} the user's own templates`,
        )
      }
    })

    it("refuses a job or sweep naming strategy_id to a key without strategies:read, and takes it with both scopes", async () => {
      const writer = keys.get('backtests:write')!
      const job = await t.signed(writer, 'POST', '/v1/backtest/jobs', { strategy_id: strategyId, ...span })
      assert.equal(job.statusCode, 403, job.body)
      assert.deepEqual(job.json().error, {
        code: 'INSUFFICIENT_PERMISSION',
        message: "strategy_id reads a stored strategy, whose params the config shows: this API key lacks the scope strategies:read; a key's scopes never change: create a key with strategies:read among its scopes (POST /v1/api-keys, or perpetua keys create --scopes …,strategies:read)",
        request_id: job.json().error.request_id,
      })
      const sweep = await t.signed(writer, 'POST', '/v1/backtest/sweeps', { base: { strategy_id: strategyId, ...span }, grid: { fast: [5, 10] } })
      assert.equal(sweep.statusCode, 403, sweep.body)
      assert.match(sweep.json().error.message, /^base\.strategy_id reads a stored strategy.*lacks the scope strategies:read; a key's scopes never change: create a key with strategies:read among its scopes/)
      // The same job without strategy_id needs backtests:write alone, as before.
      const plain = await t.signed(writer, 'POST', '/v1/backtest/jobs', { template_id: 'sma_cross', params: { fast: 10, slow: 30 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '10000', ...span })
      assert.equal(plain.statusCode, 200, plain.body)

      const both = await t.createKey(['backtests:write', 'strategies:read'], `scopes-${backend}@example.test`)
      const based = await t.signed(both, 'POST', '/v1/backtest/jobs', { strategy_id: strategyId, ...span })
      assert.equal(based.statusCode, 200, based.body)
      assert.deepEqual(based.json().config.params, { fast: 10, slow: 30, allow_short: false })
      const sweepBased = await t.signed(both, 'POST', '/v1/backtest/sweeps', { base: { strategy_id: strategyId, ...span }, grid: { fast: [5, 10] } })
      assert.equal(sweepBased.statusCode, 202, sweepBased.body)
    })
  })
}
