import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { ONE_MINUTE_RANGE_JOB, pollEnded } from '../support/backtest-job.js'
import type { KeyPair } from '../support/signing.js'

type Json = Record<string, any>

/** 41 days: enough daily returns for the default 16 CSCV blocks. */
const base = ONE_MINUTE_RANGE_JOB
const SCOPES = ['backtests:read', 'backtests:write'] as const

const ended = (t: TestApp, key: KeyPair, path: string): Promise<Json> => pollEnded(t, key, path)

async function storedConfigurations(t: TestApp, id: string): Promise<Json[]> {
  const row = await t.database.handle.db.selectFrom('backtest_sweeps').select('configurations').where('id', '=', id).executeTakeFirstOrThrow()
  return row.configurations as Json[]
}

for (const backend of backends()) {
  describe(`sweeps over protective exits (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'workers', engineThreads: 2 })
      key = await t.createKey([...SCOPES])
    })
    after(() => t.close())

    it('runs each stop distance of the grid over the base exits, each run equal to the job with those exits', async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/sweeps', { base: { ...base, exits: { take_profit: '0.03' } }, grid: { 'exits.stop_loss': [0.01, 0.02, 0.05] } })
      assert.equal(created.statusCode, 202, created.body)
      const queued = created.json()
      assert.deepEqual(queued.config.base.exits, { take_profit: '0.03', trigger: 'last' })
      assert.deepEqual(queued.config.grid, { 'exits.stop_loss': [0.01, 0.02, 0.05] })
      assert.deepEqual(await storedConfigurations(t, queued.id), [
        { fast: 10, slow: 30, allow_short: false, 'exits.stop_loss': '0.01' },
        { fast: 10, slow: 30, allow_short: false, 'exits.stop_loss': '0.02' },
        { fast: 10, slow: 30, allow_short: false, 'exits.stop_loss': '0.05' },
      ])

      const done = await ended(t, key, `/v1/backtest/sweeps/${queued.id}`)
      assert.equal(done.status, 'done', JSON.stringify(done.error))
      const runs = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${queued.id}/runs`)).json().data as Json[]
      assert.deepEqual(
        runs.map((run) => run.params),
        ['0.01', '0.02', '0.05'].map((stop) => ({ fast: 10, slow: 30, allow_short: false, 'exits.stop_loss': stop })),
      )
      assert.equal(new Set(runs.map((run) => JSON.stringify(run.metrics))).size, 3, 'each stop gives its own result')
      for (const run of runs) assert.equal(typeof run.metrics.exit_reasons?.stop_loss, 'number', JSON.stringify(run.metrics))
      assert.ok(runs[0]!.metrics.exit_reasons.stop_loss >= runs[2]!.metrics.exit_reasons.stop_loss, 'a tighter stop is hit at least as often')
      const best = runs.find((run) => run.run_id === done.result.best.run_id)!
      assert.deepEqual(done.result.best.params, best.params)

      // The engine ran each configuration with the base's take profit and its own stop: the job with those exits agrees.
      const job = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...base, exits: { take_profit: '0.03', stop_loss: '0.02' } })
      const finished = await ended(t, key, `/v1/backtest/jobs/${job.json().id}`)
      assert.equal(finished.status, 'done', JSON.stringify(finished.error))
      assert.deepEqual(runs[1]!.metrics, finished.result.metrics)
      // The run's config, as the runs list shows it, is that job's: the swept stop folded into the base's exits.
      assert.deepEqual(runs[1]!.config, finished.config)
    })
  })

  describe(`sweep exits refused and resolved (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'queue' })
    })
    after(() => t.close())

    it('refuses a bad exits key, value, range or base with 400 naming it, and stores nothing', async () => {
      const key = await t.createKey([...SCOPES])
      const random = (space: Json) => ({ base, random: { samples: 3, space } })
      const cases: [Json, string][] = [
        [{ base, grid: { 'exits.stop_loss': [0, 0.02] } }, 'grid.exits.stop_loss'],
        [{ base, grid: { 'exits.stop_loss': [0.02, 1] } }, 'grid.exits.stop_loss'],
        [{ base, grid: { 'exits.stop_loss': ['abc'] } }, 'grid.exits.stop_loss'],
        [{ base, grid: { 'exits.stop_loss': [true] } }, 'grid.exits.stop_loss'],
        [{ base, grid: { 'exits.trailing_stop': [0.01, 0.3] } }, 'grid.exits.trailing_stop'],
        [{ base, grid: { 'exits.trailing_activation': [0.01] } }, 'grid.exits.trailing_activation'],
        [{ base, grid: { 'exits.trigger': ['mark'] } }, 'grid.exits.trigger'],
        [{ base, grid: { 'exits.stop': [0.01] } }, 'grid.exits.stop'],
        [{ base, grid: { 'exits.stop_loss': [0.01, 0.01] } }, 'grid.exits.stop_loss'],
        [random({ 'exits.stop_loss': { min: 0, max: 0.05 } }), 'random.space.exits.stop_loss.min'],
        [random({ 'exits.stop_loss': { min: 0.01, max: '2' } }), 'random.space.exits.stop_loss.max'],
        [random({ 'exits.stop_loss': { min: 0.05, max: 0.01 } }), 'random.space.exits.stop_loss'],
        [random({ 'exits.trailing_stop': { min: 0.01, max: 0.05 }, 'exits.trailing_activation': { min: 0, max: 0.05 } }), 'random.space.exits.trailing_activation.min'],
        [{ base: { ...base, exits: { stop_loss: '2' } }, grid: { fast: [5, 10] } }, 'base.exits.stop_loss'],
        [{ base: { ...base, exits: {} }, grid: { 'exits.stop_loss': [0.01] } }, 'base.exits'],
        [{ base: { ...base, slippage_bps: '2000' }, grid: { fast: [5, 10] } }, 'base.slippage_bps'],
      ]
      for (const [body, field] of cases) {
        const res = await t.signed(key, 'POST', '/v1/backtest/sweeps', body)
        assert.equal(res.statusCode, 400, `${field}: ${res.body}`)
        assert.deepEqual([res.json().error.code, res.json().error.field], ['INVALID_PARAMETER', field], res.body)
      }
      const bad = await t.signed(key, 'POST', '/v1/backtest/sweeps', { base, grid: { 'exits.trailing_activation': [0.01] } })
      assert.match(bad.json().error.message, /grid\.exits\.trailing_activation needs exits\.trailing_stop/)
      assert.deepEqual(await t.database.handle.db.selectFrom('backtest_sweeps').select('id').execute(), [])
    })

    it('stores each configuration with its swept exits as decimal strings, from strings, numbers and seeded draws', async () => {
      const key = await t.createKey([...SCOPES])
      const listed = await t.signed(key, 'POST', '/v1/backtest/sweeps', {
        base: { ...base, exits: { trailing_stop: '0.01', trigger: 'last' }, slippage_bps: '2' },
        grid: { fast: [5, 10], 'exits.trailing_activation': ['0.005', 0.02] },
      })
      assert.equal(listed.statusCode, 202, listed.body)
      assert.deepEqual([listed.json().config.base.exits, listed.json().config.base.slippage_bps], [{ trailing_stop: '0.01', trigger: 'last' }, '2'])
      assert.deepEqual(
        (await storedConfigurations(t, listed.json().id)).map((c) => [c.fast, c['exits.trailing_activation']]),
        [
          [5, '0.005'],
          [5, '0.02'],
          [10, '0.005'],
          [10, '0.02'],
        ],
      )
      const body = { base, random: { samples: 12, seed: 3, space: { 'exits.stop_loss': { min: '0.005', max: 0.05 } } } }
      const first = (await t.signed(key, 'POST', '/v1/backtest/sweeps', body)).json()
      const again = (await t.signed(key, 'POST', '/v1/backtest/sweeps', body)).json()
      const drawn = await storedConfigurations(t, first.id)
      assert.deepEqual(drawn, await storedConfigurations(t, again.id), 'the same seed draws the same stops')
      for (const configuration of drawn) {
        const stop = configuration['exits.stop_loss']
        assert.match(stop, /^0\.0*[1-9]\d{0,11}$/, 'a decimal string of at most 12 significant digits')
        assert.ok(Number(stop) >= 0.005 && Number(stop) <= 0.05, stop)
      }
      assert.ok(new Set(drawn.map((c) => c['exits.stop_loss'])).size > 6, 'the draws vary')
      for (const id of [listed.json().id, first.id, again.id]) assert.equal((await t.signed(key, 'POST', `/v1/backtest/sweeps/${id}/cancel`, {})).statusCode, 200)
    })

    it('refuses a sweep over exits without the write scope', async () => {
      const reader = await t.createKey(['backtests:read'])
      const res = await t.signed(reader, 'POST', '/v1/backtest/sweeps', { base, grid: { 'exits.stop_loss': [0.01] } })
      assert.equal(res.statusCode, 403)
      const unsigned = await t.app.inject({ method: 'POST', url: '/v1/backtest/sweeps', payload: { base, grid: { 'exits.stop_loss': [0.01] } } })
      assert.equal(unsigned.statusCode, 401)
    })
  })
}
