import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'

// Declared in an order jsonb would not keep: jsonb sorts keys by length then bytes (risk, lookback, stop_atr, atr_period).
const ORDER = ['lookback', 'atr_period', 'stop_atr', 'risk']
const ATR_BREAKOUT = `export const params = {
  lookback: { type: 'integer', default: 20, minimum: 2, maximum: 200 },
  atr_period: { type: 'integer', default: 14, minimum: 2, maximum: 100 },
  stop_atr: { type: 'number', default: 2, minimum: 0.5, maximum: 10 },
  risk: { type: 'number', default: 0.01, minimum: 0.001, maximum: 0.1 },
}
export function warmup(p) { return p.lookback + p.atr_period }
export function create(p, ctx) { return { onBar(bar) { return NaN } } }
`
const SCOPES = ['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write'] as const
const RANGE = { symbols: ['BTCUSDT'], timeframe: '1h', start: '2023-01-01T00:00:00Z', end: '2023-01-31T23:00:00Z', capital: '10000' }
type Json = Record<string, any>

const keys = (object: unknown) => Object.keys(object as object)

for (const backend of backends()) {
  describe(`a module's params keep their declared order in every answer (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    let id: string
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'workers' })
      key = await t.createKey([...SCOPES])
      const upload = await t.signed(key, 'POST', '/v1/templates', { name: 'atr breakout', source: ATR_BREAKOUT })
      assert.equal(upload.statusCode, 201, upload.body)
      id = upload.json().id
    })
    after(() => t.close())

    it('the template: upload, listing and detail', async () => {
      const listed = (await t.signed(key, 'GET', '/v1/templates')).json().data.find((one: Json) => one.id === id)
      const detail = (await t.signed(key, 'GET', `/v1/templates/${id}`)).json()
      for (const template of [listed, detail]) {
        assert.deepEqual(keys(template.params_schema.properties), ORDER)
        assert.deepEqual(keys(template.defaults), ORDER)
      }
      // A new version is stored the same way.
      const v2 = await t.signed(key, 'PUT', `/v1/templates/${id}`, { source: ATR_BREAKOUT.replace('default: 20', 'default: 21') })
      assert.ok(v2.statusCode === 200 || v2.statusCode === 201, v2.body)
      assert.deepEqual(keys((await t.signed(key, 'GET', `/v1/templates/${id}?version=2`)).json().params_schema.properties), ORDER)
    })

    it('strategy records: created, read, listed and patched', async () => {
      // Given in another order (and partly): answered in the declared one.
      const created = await t.signed(key, 'POST', '/v1/strategies', { name: 'atr', template_id: id, params: { risk: 0.02, lookback: 30 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' })
      assert.equal(created.statusCode, 200, created.body)
      const strategy = created.json()
      assert.deepEqual(keys(strategy.params), ORDER)
      assert.deepEqual(keys((await t.signed(key, 'GET', `/v1/strategies/${strategy.id}`)).json().params), ORDER)
      const listed = (await t.signed(key, 'GET', '/v1/strategies')).json().data.find((one: Json) => one.id === strategy.id)
      assert.deepEqual(keys(listed.params), ORDER)
      const patched = await t.signed(key, 'PATCH', `/v1/strategies/${strategy.id}`, { params: { stop_atr: 3, atr_period: 10 } })
      assert.equal(patched.statusCode, 200, patched.body)
      assert.deepEqual(keys(patched.json().params), ORDER)
    })

    it("a backtest job's config, as submitted, read and listed", async () => {
      const submitted = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...RANGE, template_id: id, params: { risk: 0.02, stop_atr: 3 } })
      assert.equal(submitted.statusCode, 200, submitted.body)
      const job = submitted.json()
      assert.deepEqual(keys(job.config.params), ORDER)
      assert.deepEqual(keys((await t.signed(key, 'GET', `/v1/backtest/jobs/${job.id}`)).json().config.params), ORDER)
      const listed = (await t.signed(key, 'GET', '/v1/backtest/jobs')).json().data.find((one: Json) => one.id === job.id)
      assert.deepEqual(keys(listed.config.params), ORDER)
    })

    it("a sweep's runs", async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/sweeps', { base: { ...RANGE, end: '2023-03-31T23:00:00Z', template_id: id, params: { risk: 0.02 } }, grid: { stop_atr: [1, 2], lookback: [10] } })
      assert.equal(created.statusCode, 202, created.body)
      const sweep = created.json()
      assert.deepEqual(keys(sweep.config.base.params), ORDER)
      const deadline = Date.now() + 90_000
      let status = sweep.status
      while (status === 'queued' || status === 'running') {
        if (Date.now() > deadline) assert.fail(`sweep ${sweep.id} still ${status}`)
        t.clock.advance(5000)
        await new Promise((r) => setTimeout(r, 50))
        status = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${sweep.id}`)).json().status
      }
      assert.equal(status, 'done')
      const runs = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${sweep.id}/runs`)).json().data as Json[]
      assert.equal(runs.length, 2)
      for (const run of runs) assert.deepEqual(keys(run.params), ORDER)
    })
  })
}
