import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import type { KeyPair } from '../support/signing.js'

const SMA_PORT = readFileSync(new URL('../../examples/strategies/sma-cross.js', import.meta.url), 'utf8')
const SCOPES = ['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write'] as const
const BASE = { symbols: ['BTCUSDT'], timeframe: '1h', start: '2023-01-01T00:00:00Z', end: '2023-04-30T23:00:00Z', capital: '10000' }
type Json = Record<string, any>

async function ended(t: TestApp, key: KeyPair, id: string): Promise<Json> {
  const deadline = Date.now() + 90_000
  for (;;) {
    t.clock.advance(5000)
    const body = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${id}`)).json()
    if (body.status !== 'queued' && body.status !== 'running') return body
    if (Date.now() > deadline) assert.fail(`sweep ${id} still ${body.status}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

// Embedded (PGlite) only: the module runs in the engine thread, whatever the database.
describe('sweeps of custom templates', () => {
  let t: TestApp
  let key: KeyPair
  before(async () => {
    t = await startTestApp('pglite', {}, { replay: true, queue: 'workers', engineThreads: 2 })
    key = await t.createKey([...SCOPES])
  })
  after(() => t.close())

  it("checks swept values against the module's params schema, skips what its validate() refuses, pins the version, and runs as the built-in", async () => {
    const upload = await t.signed(key, 'POST', '/v1/templates', { name: 'sma port', source: SMA_PORT })
    assert.equal(upload.statusCode, 201, upload.body)
    const id = upload.json().id as string
    const grid = { fast: [5, 12, 50], slow: [40] }

    const bad = await t.signed(key, 'POST', '/v1/backtest/sweeps', { base: { ...BASE, template_id: id }, grid: { fast: [0, 5], slow: [40] } })
    assert.equal(bad.statusCode, 400, bad.body)
    assert.equal(bad.json().error.field, 'grid.fast')
    const stranger = await t.createKey([...SCOPES], 'stranger@example.com')
    const foreign = await t.signed(stranger, 'POST', '/v1/backtest/sweeps', { base: { ...BASE, template_id: id }, grid })
    assert.equal(foreign.statusCode, 400, foreign.body)
    assert.equal(foreign.json().error.field, 'base.template_id')

    const created = await t.signed(key, 'POST', '/v1/backtest/sweeps', { base: { ...BASE, template_id: id }, grid })
    assert.equal(created.statusCode, 202, created.body)
    const custom = created.json()
    assert.deepEqual([custom.config.configurations, custom.config.skipped], [2, 1], 'fast 50 ≥ slow 40 is refused by the module')
    assert.equal(custom.config.base.template_version, 1)
    assert.match(custom.config.base.template_sha256, /^[0-9a-f]{64}$/)
    // A new version does not change what the queued sweep runs.
    const v2 = await t.signed(key, 'PUT', `/v1/templates/${id}`, { source: SMA_PORT.replace('fast < slow', 'fast < slow ') })
    assert.ok(v2.statusCode === 200 || v2.statusCode === 201, v2.body)

    const builtin = (await t.signed(key, 'POST', '/v1/backtest/sweeps', { base: { ...BASE, template_id: 'sma_cross' }, grid })).json()
    const [a, b] = [await ended(t, key, custom.id), await ended(t, key, builtin.id)]
    for (const sweep of [a, b]) assert.equal(sweep.status, 'done', JSON.stringify(sweep.error))
    const runs = async (sweepId: string) => (await t.signed(key, 'GET', `/v1/backtest/sweeps/${sweepId}/runs`)).json().data as Json[]
    const [customRuns, builtinRuns] = [await runs(custom.id), await runs(builtin.id)]
    assert.equal(customRuns.length, 2)
    assert.ok(builtinRuns.some((run) => run.metrics.total_trades > 0), 'the range trades')
    assert.deepEqual(
      customRuns.map((run) => run.metrics),
      builtinRuns.map((run) => run.metrics),
    )
  })
})
