import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'

const base = {
  template_id: 'sma_cross',
  symbols: ['BTCUSDT'],
  timeframe: '1h',
  start: '2023-01-01T00:00:00Z',
  end: '2023-03-31T23:00:00Z',
  capital: '10000',
}
const sweep = { base, grid: { fast: [5, 10, 40], slow: [30, 50] } }
const SCOPES = ['backtests:read', 'backtests:write'] as const

type Json = Record<string, any>

/** Polls the way a client must: at most once per 5 s of (test) clock time, until `done` says stop. */
async function pollUntil(t: TestApp, key: KeyPair, path: string, done: (body: Json) => boolean): Promise<Json> {
  const deadline = Date.now() + 60_000
  for (;;) {
    t.clock.advance(5000)
    const res = await t.signed(key, 'GET', path)
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    if (done(body)) return body
    if (Date.now() > deadline) assert.fail(`${path} still ${body.status}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

const ended = (body: Json) => body.status !== 'queued' && body.status !== 'running'

for (const backend of backends()) {
  describe(`sweeps with workers (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'workers', engineThreads: 2 })
      key = await t.createKey([...SCOPES])
    })
    after(() => t.close())

    it('runs every configuration once, each with the metrics of its own backtest, and serves runs and returns', async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/sweeps', sweep)
      assert.equal(created.statusCode, 202, created.body)
      const queued = created.json()
      assert.match(queued.id, /^sw_[0-9a-f]{8}$/)
      assert.deepEqual([queued.status, queued.progress, queued.result, queued.error, queued.started_at, queued.finished_at], ['queued', 0, null, null, null, null])
      // fast 40 ≥ slow 30 is refused by sma_cross: skipped, not run.
      assert.deepEqual([queued.config.configurations, queued.config.skipped, queued.config.objective, queued.config.cscv_blocks], [5, 1, 'sharpe', 16])
      assert.deepEqual(queued.config.base.params, { fast: 10, slow: 30, allow_short: false })

      const done = await pollUntil(t, key, `/v1/backtest/sweeps/${queued.id}`, ended)
      assert.equal(done.status, 'done', JSON.stringify(done.error))
      assert.equal(done.progress, 1)

      const runs = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${queued.id}/runs`)).json()
      assert.deepEqual(
        runs.data.map((run: Json) => [run.run_id, run.params.fast, run.params.slow]),
        [['r1', 5, 30], ['r2', 5, 50], ['r3', 10, 30], ['r4', 10, 50], ['r5', 40, 50]],
      )
      assert.equal(runs.next_cursor, null)
      const stored = await t.database.handle.db.selectFrom('backtest_sweep_runs').select('run_no').where('sweep_id', '=', queued.id).execute()
      assert.equal(stored.length, 5)

      // Each run equals the single backtest of its configuration.
      for (const run of [runs.data[0], runs.data[3], runs.data[4]]) {
        const job = (await t.signed(key, 'POST', '/v1/backtest/jobs', { ...base, params: run.params })).json()
        const finished = await pollUntil(t, key, `/v1/backtest/jobs/${job.id}`, ended)
        assert.equal(finished.status, 'done', JSON.stringify(finished.error))
        assert.deepEqual(run.metrics, finished.result.metrics, `run ${run.run_id}`)
        // The returns column is the job's daily equity curve, differenced.
        const returns = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${queued.id}/returns`)).json()
        const column = returns.run_ids.indexOf(run.run_id)
        const curve = finished.result.equity_curve.map(([, value]: [string, string]) => Number(value))
        assert.equal(returns.returns.length, curve.length - 1)
        assert.deepEqual(returns.dates, finished.result.equity_curve.slice(1).map(([time]: [string]) => time))
        for (let i = 1; i < curve.length; i++) assert.ok(Math.abs(returns.returns[i - 1][column] - (curve[i] / curve[i - 1] - 1)) < 1e-9)
      }

      // Sorted by the objective: best first, as the stored metric says.
      const sorted = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${queued.id}/runs?sort=objective&limit=2`)).json()
      const sharpe = (run: Json) => (run.metrics.sharpe === null ? -Infinity : Number(run.metrics.sharpe))
      const ranked = [...runs.data].sort((a, b) => sharpe(b) - sharpe(a) || a.run_id.localeCompare(b.run_id))
      const next = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${queued.id}/runs?sort=objective&limit=2&cursor=${sorted.next_cursor}`)).json()
      const last = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${queued.id}/runs?sort=objective&limit=2&cursor=${next.next_cursor}`)).json()
      assert.deepEqual([...sorted.data, ...next.data, ...last.data].map((run: Json) => run.run_id), ranked.map((run) => run.run_id))
      assert.equal(last.next_cursor, null)

      {
        assert.equal(done.result.best.run_id, ranked[0].run_id)
        assert.deepEqual(done.result.best.metrics, ranked[0].metrics)
        assert.equal(done.result.statistics.n_trials, 5)
        // The statistics are the matrix's: Sharpe per observation (ddof 1) of each column, their variance.
        const matrix = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${queued.id}/returns`)).json()
        const columns = matrix.run_ids.map((_: string, j: number) => matrix.returns.map((row: number[]) => row[j]!))
        const perObservation = (xs: number[]) => {
          const mean = xs.reduce((a, b) => a + b, 0) / xs.length
          const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1))
          return sd === 0 ? 0 : mean / sd
        }
        const sharpes = columns.map(perObservation)
        const meanSharpe = sharpes.reduce((a: number, b: number) => a + b, 0) / sharpes.length
        const variance = sharpes.reduce((a: number, b: number) => a + (b - meanSharpe) ** 2, 0) / (sharpes.length - 1)
        assert.ok(Math.abs(done.result.statistics.sharpe_variance - variance) < 1e-12, `${done.result.statistics.sharpe_variance} vs ${variance}`)
        const bestColumn = matrix.run_ids.indexOf(done.result.best.run_id)
        assert.ok(Math.abs(done.result.statistics.best_sharpe - sharpes[bestColumn]) < 1e-12)
        assert.equal(done.result.statistics.observations, matrix.dates.length)
        assert.equal(done.result.statistics.pbo.combinations, 12_870)
        const json = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${queued.id}/returns`)).json()
        const csv = await t.signed(key, 'GET', `/v1/backtest/sweeps/${queued.id}/returns`, undefined, { accept: 'text/csv' })
        assert.match(csv.headers['content-type'] as string, /^text\/csv/)
        const lines = csv.body.trim().split('\n')
        assert.equal(lines[0], 'date,r1,r2,r3,r4,r5')
        assert.equal(lines.length, json.dates.length + 1)
        assert.deepEqual(lines[1]!.split(',').slice(1).map(Number), json.returns[0])
        // run_ids: only those columns, in the order asked, the same numbers as the whole matrix's.
        const picked = (await t.signed(key, 'GET', `/v1/backtest/sweeps/${queued.id}/returns?run_ids=r4,r2`)).json()
        assert.deepEqual(picked.run_ids, ['r4', 'r2'])
        assert.deepEqual(picked.dates, json.dates)
        assert.deepEqual(
          picked.returns,
          json.returns.map((row: number[]) => [row[3], row[1]]),
        )
        const pickedCsv = await t.signed(key, 'GET', `/v1/backtest/sweeps/${queued.id}/returns?run_ids=r5&format=csv`)
        assert.equal(pickedCsv.body.split('\n')[0], 'date,r5')
        const many = Array.from({ length: 101 }, (_, i) => `r${i + 1}`).join(',')
        for (const [ids, message] of [
          ['r6', /"r6" is not a run of this sweep \(r1 … r5\)/],
          ['r0', /"r0" is not a run id/],
          ['r1,x', /"x" is not a run id/],
          ['', /"" is not a run id/],
          ['r2,r2', /names r2 twice/],
          [many, /names 101 runs; at most 100/],
        ] as const) {
          const refused = await t.signed(key, 'GET', `/v1/backtest/sweeps/${queued.id}/returns?run_ids=${encodeURIComponent(ids)}`)
          assert.equal(refused.statusCode, 400, `${ids}: ${refused.body}`)
          assert.deepEqual([refused.json().error.code, refused.json().error.field], ['INVALID_PARAMETER', 'run_ids'])
          assert.match(refused.json().error.message, message)
        }
        const events = await t.database.handle.db.selectFrom('events').select('data').where('type', '=', 'backtest.sweep_done').execute()
        assert.ok(events.some((e) => (e.data as Json).sweep_id === queued.id && (e.data as Json).status === 'done'))
      }
    })

    it('walks forward over the runs: windows choose a run in sample, the curve stitches their out-of-sample days', async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/sweeps', { ...sweep, objective: 'calmar', walk_forward: { in_sample_days: 30, out_of_sample_days: 15 } })
      assert.equal(created.statusCode, 202, created.body)
      const done = await pollUntil(t, key, `/v1/backtest/sweeps/${created.json().id}`, ended)
      assert.equal(done.status, 'done', JSON.stringify(done.error))
      const wf = done.result.walk_forward
      const days = done.result.statistics.observations
      assert.deepEqual([wf.objective, wf.anchored], ['calmar', false])
      assert.equal(wf.windows.length, Math.floor((days - 30) / 15))
      const runIds = new Set(['r1', 'r2', 'r3', 'r4', 'r5'])
      for (const [k, window] of wf.windows.entries()) {
        assert.ok(runIds.has(window.run_id), window.run_id)
        assert.deepEqual([window.in_sample.days, window.out_of_sample.days], [30, 15])
        if (k > 0) assert.ok(window.out_of_sample.first_day > wf.windows[k - 1].out_of_sample.last_day)
      }
      assert.equal(wf.curve.length, wf.windows.length * 15 + 1)
      assert.equal(wf.curve[0][1], 10000)
      const refused = await t.signed(key, 'POST', '/v1/backtest/sweeps', { ...sweep, objective: 'total_trades', walk_forward: { in_sample_days: 30, out_of_sample_days: 15 } })
      assert.equal(refused.statusCode, 400)
      assert.equal(refused.json().error.field, 'objective')
    })

    it('cancels a running sweep: it stays cancelled, with neither a result nor an event', async () => {
      // A slow exchange keeps the sweep loading its history (running) long enough to cancel it.
      t.replay!.faults.add({ path: '/fapi/v1/klines', latencyMs: 1500, times: 1 })
      const created = (await t.signed(key, 'POST', '/v1/backtest/sweeps', { ...sweep, base: { ...base, start: '2021-01-01T00:00:00Z', end: '2021-03-31T23:00:00Z' } })).json()
      await pollUntil(t, key, `/v1/backtest/sweeps/${created.id}`, (body) => body.status === 'running')
      const cancelled = await t.signed(key, 'POST', `/v1/backtest/sweeps/${created.id}/cancel`, { reason: 'enough' })
      assert.equal(cancelled.statusCode, 200, cancelled.body)
      assert.equal(cancelled.json().status, 'cancelled')
      assert.equal((await t.signed(key, 'POST', `/v1/backtest/sweeps/${created.id}/cancel`)).json().error.code, 'INVALID_STATE')
      await new Promise((r) => setTimeout(r, 2500))
      const after = await pollUntil(t, key, `/v1/backtest/sweeps/${created.id}`, () => true)
      assert.deepEqual([after.status, after.result, after.error], ['cancelled', null, null])
      const events = await t.database.handle.db.selectFrom('events').select('data').where('type', '=', 'backtest.sweep_done').execute()
      assert.ok(!events.some((e) => (e.data as Json).sweep_id === created.id))
    })
  })

  describe(`sweep API without workers (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'queue' })
    })
    after(() => t.close())

    it('refuses bad sweeps with 400 INVALID_PARAMETER naming the field, and stores nothing', async () => {
      const key = await t.createKey([...SCOPES])
      const cases: [Json, string][] = [
        [{ ...sweep, base: { ...base, symbols: undefined } }, 'base.symbols'],
        [{ ...sweep, base: { ...base, template_id: 'nope' } }, 'base.template_id'],
        [{ ...sweep, base: { ...base, capital: '0' } }, 'base.capital'],
        [{ ...sweep, base: { ...base, params: { fats: 3 } } }, 'base.params.fats'],
        // No configuration of the grid makes fast 50 < slow: the base's own error stands.
        [{ base: { ...base, params: { fast: 50 } }, grid: { slow: [20, 40] } }, 'base.params.fast'],
        [{ base, grid: { fats: [5, 10] } }, 'grid.fats'],
        [{ base, grid: { fast: [5, 1] } }, 'grid.fast'],
        [{ base, grid: { fast: [5.5] } }, 'grid.fast'],
        [{ base, grid: { fast: [5, 5] } }, 'grid.fast'],
        [{ base, grid: { fast: [40], slow: [20, 30] } }, 'grid'],
        [{ base }, 'grid'],
        [{ ...sweep, random: { samples: 3, space: { fast: { min: 2, max: 9 } } } }, 'grid'],
        [{ base, random: { samples: 3, space: { fast: { min: 0, max: 9 } } } }, 'random.space.fast.min'],
        [{ base, random: { samples: 3, space: { fast: { min: 9, max: 2 } } } }, 'random.space.fast'],
        [{ ...sweep, cscv_blocks: 15 }, 'cscv_blocks'],
        [{ ...sweep, cscv_blocks: 16, base: { ...base, end: '2023-01-20T00:00:00Z' } }, 'cscv_blocks'],
        [{ ...sweep, objective: 'luck' }, 'objective'],
        [{ ...sweep, walk_forward: { in_sample_days: 80, out_of_sample_days: 30 } }, 'walk_forward.in_sample_days'],
      ]
      for (const [body, field] of cases) {
        const res = await t.signed(key, 'POST', '/v1/backtest/sweeps', JSON.stringify(body))
        assert.equal(res.statusCode, 400, `${field}: ${res.body}`)
        assert.equal(res.json().error.code, 'INVALID_PARAMETER')
        assert.equal(res.json().error.field, field, res.body)
      }
      // A value out of the param's bounds is named (issue 35).
      const outside = await t.signed(key, 'POST', '/v1/backtest/sweeps', { base, grid: { fast: [5, 10, 1000] } })
      assert.equal(outside.json().error.message, 'grid.fast must be an integer between 2 and 999; 1000 is not')
      const tooMany = await t.signed(key, 'POST', '/v1/backtest/sweeps', { base, grid: { fast: range(2, 102), slow: range(110, 212) } })
      assert.equal(tooMany.statusCode, 400)
      assert.match(tooMany.json().error.message, /10,200 configurations \(100 × 102\); a sweep runs at most 10,000/)
      // 700 configurations × C(20, 10) splits is more CSCV work than a sweep computes (16 blocks over 10,000 is the most).
      const costly = await t.signed(key, 'POST', '/v1/backtest/sweeps', { base, grid: { fast: range(2, 9), slow: range(110, 210) }, cscv_blocks: 20 })
      assert.equal(costly.statusCode, 400, costly.body)
      assert.equal(costly.json().error.field, 'cscv_blocks')
      assert.match(costly.json().error.message, /cscv_blocks 20 over 700 configurations ranks every run in 184,756 splits.*use cscv_blocks 18 or fewer, or at most 696 configurations with 20 blocks/)
      const affordable = await t.signed(key, 'POST', '/v1/backtest/sweeps', { base, grid: { fast: range(2, 9), slow: range(110, 209) }, cscv_blocks: 20 })
      assert.equal(affordable.statusCode, 202, affordable.body)
      await t.signed(key, 'POST', `/v1/backtest/sweeps/${affordable.json().id}/cancel`, {})
      assert.deepEqual(
        (await t.signed(key, 'GET', '/v1/backtest/sweeps')).json().data.map((s: Json) => s.config.configurations),
        [693],
        'only the affordable sweep was stored',
      )
    })

    it('refuses a symbol the exchange does not list at submission, suggesting the closest, and stores nothing; enums and lower case in words', async () => {
      const key = await t.createKey([...SCOPES])
      const typo = await t.signed(key, 'POST', '/v1/backtest/sweeps', { ...sweep, base: { ...base, symbols: ['BTCUSTD'] } })
      assert.equal(typo.statusCode, 400, typo.body)
      assert.deepEqual([typo.json().error.code, typo.json().error.field], ['INVALID_PARAMETER', 'base.symbols'])
      assert.equal(typo.json().error.message, 'the exchange lists no symbol BTCUSTD; did you mean BTCUSDT?')
      const lower = await t.signed(key, 'POST', '/v1/backtest/sweeps', { ...sweep, base: { ...base, symbols: ['ethusdt'] } })
      assert.equal(lower.json().error.message, 'base.symbols.0: symbols are upper case, e.g. BTCUSDT; got "ethusdt", send "ETHUSDT"')
      const timeframe = await t.signed(key, 'POST', '/v1/backtest/sweeps', { ...sweep, base: { ...base, timeframe: '1H' } })
      assert.equal(timeframe.json().error.message, 'base.timeframe: must be one of 1m, 5m, 15m, 1h, 4h, 1d; got "1H"')
      assert.deepEqual((await t.signed(key, 'GET', '/v1/backtest/sweeps')).json().data, [])
    })

    it('refuses a range the exchange holds no bar of as NO_DATA naming symbol and range, before any advice on cscv_blocks, and stores nothing', async () => {
      const key = await t.createKey([...SCOPES])
      // 19 days: too few for 16 blocks too, but the range's emptiness is what the trader must hear (issue 35).
      const short = await t.signed(key, 'POST', '/v1/backtest/sweeps', { ...sweep, base: { ...base, start: '2019-01-01T00:00:00Z', end: '2019-01-20T00:00:00Z' } })
      assert.equal(short.statusCode, 400, short.body)
      assert.deepEqual([short.json().error.code, short.json().error.field], ['NO_DATA', 'base.start'])
      assert.equal(
        short.json().error.message,
        'no BTCUSDT 1h bars between 2019-01-01T00:00Z and 2019-01-20T00:00Z; the exchange has BTCUSDT 1h bars from 2019-09-08T17:00Z to ' +
          short.json().error.message.split(' to ').at(-1).split('. ')[0] +
          '. Choose a range inside the coverage (GET /v1/backtest/coverage tells it).',
      )
      const long = await t.signed(key, 'POST', '/v1/backtest/sweeps', { ...sweep, base: { ...base, symbols: ['DOGEUSDT'], start: '2024-01-01T00:00:00Z', end: '2024-12-31T00:00:00Z' } })
      assert.equal(long.statusCode, 400, long.body)
      assert.equal(long.json().error.code, 'NO_DATA')
      assert.match(long.json().error.message, /^no DOGEUSDT 1h bars between 2024-01-01T00:00Z and 2024-12-31T00:00Z; the exchange has no DOGEUSDT 1h bars at all\./)
      // A short range with bars still gets the advice about blocks.
      const covered = await t.signed(key, 'POST', '/v1/backtest/sweeps', { ...sweep, base: { ...base, end: '2023-01-20T00:00:00Z' } })
      assert.deepEqual([covered.json().error.code, covered.json().error.field], ['INVALID_PARAMETER', 'cscv_blocks'])
      assert.deepEqual((await t.signed(key, 'GET', '/v1/backtest/sweeps')).json().data, [])
    })

    it("judges base.params by the template's rule together with the swept params, not alone", async () => {
      const key = await t.createKey([...SCOPES])
      // fast 50 breaks fast < slow against sma_cross's default slow 30, but the grid replaces slow in every configuration.
      const created = await t.signed(key, 'POST', '/v1/backtest/sweeps', { base: { ...base, params: { fast: 50 } }, grid: { slow: [60, 80, 40] } })
      assert.equal(created.statusCode, 202, created.body)
      const queued = created.json()
      assert.deepEqual([queued.config.configurations, queued.config.skipped], [2, 1], 'slow 40 is skipped, as fast 50 ≥ 40')
      const stored = await t.database.handle.db.selectFrom('backtest_sweeps').select('configurations').where('id', '=', queued.id).executeTakeFirstOrThrow()
      assert.deepEqual(stored.configurations, [
        { fast: 50, slow: 60, allow_short: false },
        { fast: 50, slow: 80, allow_short: false },
      ])
      assert.equal((await t.signed(key, 'POST', `/v1/backtest/sweeps/${queued.id}/cancel`, {})).statusCode, 200)
    })

    it('draws the same random configurations from the same seed, integers for integer params', async () => {
      const key = await t.createKey([...SCOPES])
      const body = { base, random: { samples: 20, seed: 7, space: { fast: { min: 2, max: 20 }, slow: { min: 30, max: 200, step: 10 } } } }
      const first = (await t.signed(key, 'POST', '/v1/backtest/sweeps', body)).json()
      const again = (await t.signed(key, 'POST', '/v1/backtest/sweeps', body)).json()
      const configurations = async (id: string) =>
        (await t.database.handle.db.selectFrom('backtest_sweeps').select('configurations').where('id', '=', id).executeTakeFirstOrThrow()).configurations
      const drawn = await configurations(first.id)
      assert.equal(first.config.configurations, 20)
      assert.deepEqual(drawn, await configurations(again.id))
      for (const params of drawn) {
        assert.ok(Number.isInteger(params.fast) && (params.fast as number) >= 2 && (params.fast as number) <= 20, JSON.stringify(params))
        assert.ok((params.slow as number) % 10 === 0 && (params.slow as number) >= 30, JSON.stringify(params))
      }
      assert.ok(new Set(drawn.map((p) => p.fast)).size > 3, 'the draws vary')
    })

    it('limits polling one sweep to once per 5 s, with Retry-After the whole seconds left', async () => {
      const key = await t.createKey([...SCOPES])
      const id = (await t.signed(key, 'POST', '/v1/backtest/sweeps', sweep)).json().id
      assert.equal((await t.signed(key, 'GET', `/v1/backtest/sweeps/${id}`)).statusCode, 200)
      t.clock.advance(3998) // t.signed moves the clock 1 ms per request: 1001 ms left
      const fast = await t.signed(key, 'GET', `/v1/backtest/sweeps/${id}`)
      assert.equal(fast.statusCode, 429)
      assert.equal(fast.json().error.code, 'RATE_LIMITED')
      assert.equal(fast.headers['retry-after'], '2')
      assert.match(String(fast.headers.ratelimit), /, "poll";r=0;t=2$/)
      t.clock.advance(1000)
      assert.equal((await t.signed(key, 'GET', `/v1/backtest/sweeps/${id}`)).statusCode, 200)
      await t.signed(key, 'POST', `/v1/backtest/sweeps/${id}/cancel`, {})
    })

    it('counts a sweep as one of the five live jobs, and keeps sweeps to their owner', async () => {
      const key = await t.createKey([...SCOPES])
      const job = { ...base, params: {} }
      for (let i = 0; i < 4; i++) assert.equal((await t.signed(key, 'POST', '/v1/backtest/jobs', job)).statusCode, 200)
      const created = await t.signed(key, 'POST', '/v1/backtest/sweeps', sweep)
      assert.equal(created.statusCode, 202, created.body)
      const id = created.json().id
      const sixth = await t.signed(key, 'POST', '/v1/backtest/jobs', job)
      assert.equal(sixth.statusCode, 429)
      assert.match(sixth.json().error.message, /5 backtests or sweeps queued or running/)
      assert.equal((await t.signed(key, 'POST', '/v1/backtest/sweeps', sweep)).statusCode, 429)

      const other = await t.createKey([...SCOPES])
      for (const [method, path] of [
        ['GET', `/v1/backtest/sweeps/${id}`],
        ['GET', `/v1/backtest/sweeps/${id}/runs`],
        ['GET', `/v1/backtest/sweeps/${id}/returns`],
        ['POST', `/v1/backtest/sweeps/${id}/cancel`],
        ['GET', '/v1/backtest/sweeps/sw_zzzz'],
      ] as const) {
        assert.equal((await t.signed(other, method, path)).statusCode, 404, path)
      }
      assert.deepEqual((await t.signed(other, 'GET', '/v1/backtest/sweeps')).json().data, [])
      const list = (await t.signed(key, 'GET', '/v1/backtest/sweeps')).json()
      assert.deepEqual(list.data.map((s: Json) => s.id), [id])
      // Not done yet: no returns matrix.
      assert.equal((await t.signed(key, 'GET', `/v1/backtest/sweeps/${id}/returns`)).statusCode, 409)
      // A cancel frees the slot.
      assert.equal((await t.signed(key, 'POST', `/v1/backtest/sweeps/${id}/cancel`)).json().status, 'cancelled')
      assert.equal((await t.signed(key, 'POST', '/v1/backtest/jobs', job)).statusCode, 200)
      const readOnly = await t.createKey(['backtests:read'])
      assert.equal((await t.signed(readOnly, 'POST', '/v1/backtest/sweeps', sweep)).statusCode, 403)
    })
  })
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from }, (_, i) => from + i)
}
