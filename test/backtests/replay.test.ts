import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { pollEnded, SMA_CROSS_JOB } from '../support/backtest-job.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'

const SCOPES = ['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write'] as const
type Json = Record<string, any>

/** Trades on Math.random alone: a long, a short or nothing each bar, so its seed decides every trade. */
const COIN_FLIPS = `export const params = { chance: { type: 'number', default: 0.05, minimum: 0, maximum: 0.5 } }
export function create(p) {
  return {
    onBar(bar) {
      const r = Math.random()
      return r < p.chance ? 1 : r > 1 - p.chance ? -1 : NaN
    },
  }
}
`
const RANGE = { params: {}, symbols: ['BTCUSDT'], timeframe: '1h', start: '2023-01-01T00:00:00Z', end: '2023-03-31T23:00:00Z', capital: '10000' }

/** A job's daily returns as a sweep stores them (E_t / E_{t−1} − 1), from its equity curve. */
const dailyReturns = (curve: [string, string][]) => curve.slice(1).map(([, equity], i) => Number(equity) / Number(curve[i]![1]) - 1)

/**
 * Replay from the record (issue 34): a job's returned config, posted again as it is, gives the same
 * result byte for byte, its custom module's Math.random seed included; a sweep's run, as the job config
 * its runs list shows, gives that run's metrics and daily returns.
 */
for (const backend of backends()) {
  describe(`replaying jobs and sweep runs from their config (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    let template: string
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'workers', engineThreads: 2 })
      key = await t.createKey([...SCOPES])
      const upload = await t.signed(key, 'POST', '/v1/templates', { name: 'coin flips', source: COIN_FLIPS })
      assert.equal(upload.statusCode, 201, upload.body)
      template = upload.json().id
    })
    after(() => t.close())

    const submit = async (body: Json): Promise<Json> => {
      const res = await t.signed(key, 'POST', '/v1/backtest/jobs', body)
      assert.equal(res.statusCode, 200, res.body)
      return res.json()
    }
    const done = async (id: string): Promise<Json> => {
      const job = await pollEnded(t, key, `/v1/backtest/jobs/${id}`)
      assert.equal(job.status, 'done', JSON.stringify(job.error))
      return job
    }

    it("gives a random module's job, its config posted again as it is, the same result byte for byte; another seed another result", async () => {
      const first = await submit({ ...RANGE, template_id: template })
      assert.ok(Number.isInteger(first.config.seed), 'a seed drawn and recorded')
      const again = await submit(first.config)
      assert.deepEqual(again.config, first.config)
      const other = await submit({ ...first.config, seed: (first.config.seed + 1) % 2 ** 31 })
      const [a, b, c] = [await done(first.id), await done(again.id), await done(other.id)]
      assert.ok(a.result.trades.length > 20, `the module trades: ${a.result.trades.length}`)
      assert.equal(JSON.stringify(b.result), JSON.stringify(a.result))
      assert.notDeepEqual(c.result.trades, a.result.trades)
    })

    it('takes a seed on creation and records it; the same seed twice gives the same result', async () => {
      const [x, y] = [await submit({ ...RANGE, template_id: template, seed: 7 }), await submit({ ...RANGE, template_id: template, params: { chance: 0.05 }, seed: 7 })]
      assert.deepEqual([x.config.seed, y.config.seed], [7, 7])
      const [a, b] = [await done(x.id), await done(y.id)]
      assert.equal(JSON.stringify(b.result), JSON.stringify(a.result))
    })

    it("replays a built-in template's job from its config", async () => {
      const first = await submit(SMA_CROSS_JOB)
      const a = await done(first.id)
      const b = await done((await submit(a.config)).id)
      assert.ok(a.result.trades.length > 0)
      assert.equal(JSON.stringify(b.result), JSON.stringify(a.result))
    })

    it("refuses a seed or a hash on a built-in, a seed out of range and a hash that is not the version's, naming the field", async () => {
      const refused = async (body: Json, field: string, message: RegExp) => {
        const res = await t.signed(key, 'POST', '/v1/backtest/jobs', body)
        assert.equal(res.statusCode, 400, res.body)
        assert.equal(res.json().error.code, 'INVALID_PARAMETER')
        assert.equal(res.json().error.field, field, res.body)
        assert.match(res.json().error.message, message)
      }
      await refused({ ...SMA_CROSS_JOB, seed: 1 }, 'seed', /seed is for custom templates; sma_cross is built in/)
      await refused({ ...SMA_CROSS_JOB, template_sha256: 'a'.repeat(64) }, 'template_sha256', /template_sha256 is for custom templates/)
      await refused({ ...RANGE, template_id: template, seed: 2 ** 31 }, 'seed', /seed/)
      await refused({ ...RANGE, template_id: template, seed: -1 }, 'seed', /seed/)
      await refused({ ...RANGE, template_id: template, template_sha256: '0'.repeat(64) }, 'template_sha256', /version 1 of template tpl-[0-9a-f]{16} runs code of SHA-256 [0-9a-f]{64}, not 0{64}/)
    })

    it("takes a seed in a sweep's base, and each run's config from the runs list, posted as a job, gives that run's metrics and daily returns", async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/sweeps', { base: { ...RANGE, template_id: template, seed: 11 }, grid: { chance: [0.02, 0.05, 0.1] }, cscv_blocks: 2 })
      assert.equal(created.statusCode, 202, created.body)
      assert.equal(created.json().config.base.seed, 11)
      const sweep = await pollEnded(t, key, `/v1/backtest/sweeps/${created.json().id}`)
      assert.equal(sweep.status, 'done', JSON.stringify(sweep.error))
      const runs = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${sweep.id}/runs`)).json().data as Json[]
      const returns = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${sweep.id}/returns`)).json()
      assert.equal(runs.length, 3)
      for (const [k, run] of runs.entries()) {
        assert.deepEqual(run.config, { ...sweep.config.base, params: { chance: [0.02, 0.05, 0.1][k] } })
        const job = await done((await submit(run.config)).id)
        assert.ok(job.result.metrics.total_trades > 0)
        assert.equal(JSON.stringify(job.result.metrics), JSON.stringify(run.metrics))
        const column = returns.returns.map((row: number[]) => row[returns.run_ids.indexOf(run.run_id)])
        const fromJob = dailyReturns(job.result.equity_curve)
        assert.equal(fromJob.length, column.length)
        // The job's curve is decimal text, the sweep's returns floats: equal to the text's precision.
        for (const [i, r] of column.entries()) assert.ok(Math.abs(r - fromJob[i]!) < 1e-9, `day ${i}: ${r} vs ${fromJob[i]}`)
      }
    })
  })
}
