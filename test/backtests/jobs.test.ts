import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { startTestApp, type TestApp } from '../support/app.js'
import { SMA_CROSS_JOB } from '../support/backtest-job.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'

const job = SMA_CROSS_JOB
const SCOPES = ['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write'] as const

/** Polls a job the way a client must: at most once per 5 s of (test) clock time, until `done` says stop. */
async function pollUntil(t: TestApp, key: KeyPair, id: string, done: (job: { status: string }) => boolean) {
  const deadline = Date.now() + 30_000
  for (;;) {
    t.clock.advance(5000)
    const res = await t.signed(key, 'GET', `/v1/backtest/jobs/${id}`)
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    if (done(body)) return body
    if (Date.now() > deadline) assert.fail(`job ${id} still ${body.status}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

for (const backend of backends()) {
  describe(`backtest jobs with workers (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'workers' })
      key = await t.createKey([...SCOPES])
    })
    after(() => t.close())

    it('runs a job to done on recorded data, emits backtest.job_done, and stores history for the next run', async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/jobs', job)
      assert.equal(created.statusCode, 200, created.body)
      const queued = created.json()
      assert.match(queued.id, /^bt_[0-9a-f]{8}$/)
      assert.equal(queued.status, 'queued')
      assert.deepEqual([queued.progress, queued.result, queued.error, queued.started_at, queued.finished_at], [0, null, null, null, null])
      assert.deepEqual(queued.config.params, { fast: 10, slow: 30, allow_short: false })
      assert.equal(queued.config.fee_model, 'fixed_bps')
      assert.equal(queued.config.fee_bps, '5')

      const done = await pollUntil(t, key, queued.id, (j) => j.status !== 'queued' && j.status !== 'running')
      assert.equal(done.status, 'done', JSON.stringify(done.error))
      assert.equal(done.progress, 1)
      assert.ok(done.started_at && done.finished_at)
      const { metrics, equity_curve: curve, trades } = done.result
      assert.equal(curve[0][0], '2023-01-01T00:00:00.000Z')
      assert.equal(curve[0][1], '10000')
      assert.ok(curve.length >= 90, `one point per day: ${curve.length}`)
      assert.ok(trades.length > 0)
      assert.equal(metrics.total_trades, trades.length)
      for (const trade of trades) assert.ok(trade.entry_time < trade.exit_time)
      // The result names the margin tiers it used: the symbol's own, from the dated snapshot.
      assert.deepEqual(done.result.margin_table, { source: 'snapshot', as_of: '2024-10-24', fallback_symbols: [] })

      const events = await t.database.handle.db.selectFrom('events').selectAll().where('type', '=', 'backtest.job_done').execute()
      assert.equal(events.length, 1)
      assert.equal((events[0]!.data as { job_id: string }).job_id, queued.id)

      const list = (await t.signed(key, 'GET', '/v1/backtest/jobs')).json()
      assert.deepEqual(Object.keys(list.data[0].result), ['metrics'])

      // The same range again: served from the store, not the exchange.
      const klineCalls = () => t.replay!.stats().byPath['/fapi/v1/klines'] ?? 0
      const before = klineCalls()
      assert.ok(before > 0)
      const again = (await t.signed(key, 'POST', '/v1/backtest/jobs', job)).json()
      const second = await pollUntil(t, key, again.id, (j) => j.status === 'done' || j.status === 'failed')
      assert.equal(second.status, 'done')
      assert.equal(klineCalls(), before)
      assert.deepEqual(second.result.metrics, metrics)
    })

    it('cancels a running job: it stays cancelled, and neither a result nor an event is ever written', async () => {
      // A slow exchange keeps the job loading history (running) long enough to cancel it mid-run.
      t.replay!.faults.add({ path: '/fapi/v1/klines', latencyMs: 1500, times: 1 })
      const created = (await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, start: '2021-01-01T00:00:00Z', end: '2021-03-31T23:00:00Z' })).json()
      await pollUntil(t, key, created.id, (j) => j.status === 'running')
      const cancelled = await t.signed(key, 'POST', `/v1/backtest/jobs/${created.id}/cancel`, { reason: 'too slow' })
      assert.equal(cancelled.json().status, 'cancelled')
      // The worker's handler has returned once pg-boss marks its job completed.
      const deadline = Date.now() + 20_000
      for (;;) {
        const { rows } = await t.database.handle.pool.query("select state from pgboss.job where data->>'jobId' = $1", [created.id])
        if (rows[0]?.state === 'completed') break
        if (Date.now() > deadline) assert.fail(`the worker is still on ${created.id}: ${JSON.stringify(rows)}`)
        await new Promise((r) => setTimeout(r, 50))
      }
      const after = await pollUntil(t, key, created.id, () => true)
      assert.deepEqual([after.status, after.result, after.error], ['cancelled', null, null])
      const events = await t.database.handle.db.selectFrom('events').select('data').where('type', '=', 'backtest.job_done').execute()
      assert.ok(!events.some((e) => (e.data as { job_id: string }).job_id === created.id))
    })

    it('runs a job whose worker stopped beating once more, on a live worker, to the same result', async () => {
      const reference = await pollUntil(t, key, (await t.signed(key, 'POST', '/v1/backtest/jobs', job)).json().id, (j) => j.status === 'done')
      const created = (await t.signed(key, 'POST', '/v1/backtest/jobs', job)).json()
      const first = await pollUntil(t, key, created.id, (j) => j.status === 'done')
      // As if its first run's worker had died mid-run: running, heartbeat long ago, no result yet.
      await t.database.handle.db
        .updateTable('backtest_jobs')
        .set({ status: 'running', heartbeat_at: sql`now() - interval '2 minutes'`, progress: 0.5, result: null, metrics: null, finished_at: null })
        .where('id', '=', created.id)
        .execute()
      const rerun = await pollUntil(t, key, created.id, (j) => j.status !== 'running')
      assert.equal(rerun.status, 'done', JSON.stringify(rerun.error))
      assert.equal(rerun.started_at, first.started_at, 'started_at is the first start')
      assert.deepEqual(rerun.result, reference.result)
      const row = await t.database.handle.db.selectFrom('backtest_jobs').select(['attempt', 'progress']).where('id', '=', created.id).executeTakeFirstOrThrow()
      assert.deepEqual(row, { attempt: 2, progress: 1 })
    })

    it('fails a job whose worker stopped beating on its second run with WORKER_LOST', async () => {
      // DOGEUSDT: listed, without bars, so a worker that takes the job before the update below ends it at once.
      const created = (await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, symbols: ['DOGEUSDT'] })).json()
      // A re-run whose worker died too: running, attempt 2, heartbeat long ago.
      const stale = sql<Date>`now() - interval '2 minutes'`
      await t.database.handle.db.updateTable('backtest_jobs').set({ status: 'running', attempt: 2, started_at: stale, heartbeat_at: stale }).where('id', '=', created.id).execute()
      const lost = await pollUntil(t, key, created.id, (j) => j.status !== 'running' && j.status !== 'queued')
      assert.equal(lost.status, 'failed')
      assert.equal(lost.error.code, 'WORKER_LOST')
      assert.match(lost.error.message, /stopped during each of its 2 runs/)
      assert.equal(lost.result, null)
    })

  })

  describe(`backtest job submission while the exchange's listing cannot be read (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'queue' })
      t.replay!.faults.add({ path: '/fapi/v1/exchangeInfo', status: 503 })
    })
    after(() => t.close())

    it('accepts a symbol it cannot check: the job, not the submission, fails on it later', async () => {
      const key = await t.createKey([...SCOPES])
      const created = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, symbols: ['BTCUSTD'] })
      assert.equal(created.statusCode, 200, created.body)
      assert.equal(created.json().status, 'queued')
      assert.ok((t.replay!.stats().byPath['/fapi/v1/exchangeInfo'] ?? 0) > 0, 'the listing was asked for')
    })
  })

  describe(`backtest job API without workers (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'queue' })
    })
    after(() => t.close())

    it('accepts exactly 5 of 20 concurrent submissions from one user', async () => {
      const key = await t.createKey([...SCOPES])
      const answers = await Promise.all(Array.from({ length: 20 }, () => t.signed(key, 'POST', '/v1/backtest/jobs', job)))
      const statuses = answers.map((a) => a.statusCode).sort()
      assert.deepEqual(statuses, [...Array(5).fill(200), ...Array(15).fill(429)])
      for (const refused of answers.filter((a) => a.statusCode === 429)) assert.equal(refused.json().error.code, 'RATE_LIMITED')
      const other = await t.createKey([...SCOPES])
      assert.equal((await t.signed(other, 'POST', '/v1/backtest/jobs', job)).statusCode, 200)
    })

    it('refuses bad submissions with 400 INVALID_PARAMETER naming the field', async () => {
      const key = await t.createKey([...SCOPES])
      const future = new Date(t.clock.now() + 86_400_000).toISOString()
      const cases: [Record<string, unknown>, string][] = [
        [{ ...job, template_id: undefined }, 'template_id'],
        [{ ...job, template_id: 'nope' }, 'template_id'],
        [{ ...job, params: { fast: 'x' } }, 'params.fast'],
        [{ ...job, params: { fats: 10 } }, 'params.fats'],
        [{ ...job, start: undefined }, 'start'],
        [{ ...job, start: 'yesterday' }, 'start'],
        [{ ...job, end: '2022-12-31T00:00:00Z' }, 'end'],
        [{ ...job, start: '2017-01-01T00:00:00Z', end: '2023-01-02T00:00:00Z' }, 'end'],
        [{ ...job, end: future }, 'end'],
        [{ ...job, timeframe: '2h' }, 'timeframe'],
        [{ ...job, capital: 'lots' }, 'capital'],
        [{ ...job, capital: '0' }, 'capital'],
        [{ ...job, symbols: ['BTCUSDT', 'ETHUSDT'] }, 'symbols'],
        [{ ...job, fee_bps: 'x' }, 'fee_bps'],
        [{ ...job, leverage: 21 }, 'leverage'],
      ]
      for (const [body, field] of cases) {
        const res = await t.signed(key, 'POST', '/v1/backtest/jobs', JSON.stringify(body))
        assert.equal(res.statusCode, 400, `${field}: ${res.body}`)
        assert.equal(res.json().error.code, 'INVALID_PARAMETER')
        assert.equal(res.json().error.field, field, res.body)
      }
      assert.deepEqual((await t.signed(key, 'GET', '/v1/backtest/jobs')).json().data, [])
    })

    it('refuses a symbol the exchange does not list at submission, suggesting the closest listed one, and creates nothing', async () => {
      const key = await t.createKey([...SCOPES])
      const typo = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, symbols: ['BTCUSTD'] })
      assert.equal(typo.statusCode, 400, typo.body)
      assert.deepEqual([typo.json().error.code, typo.json().error.field], ['INVALID_PARAMETER', 'symbols'])
      assert.equal(typo.json().error.message, 'the exchange lists no symbol BTCUSTD; did you mean BTCUSDT?')
      // Nothing near it: named, without a guess.
      const far = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, symbols: ['ZZZZZZZZ'] })
      assert.equal(far.json().error.message, 'the exchange lists no symbol ZZZZZZZZ')
      // A halted contract still has history: a backtest of it is accepted (a strategy on it is refused).
      const halted = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, symbols: ['EOSUSDT'] })
      assert.equal(halted.statusCode, 200, halted.body)
      assert.deepEqual((await t.signed(key, 'GET', '/v1/backtest/jobs')).json().data.map((j: { config: { symbols: string[] } }) => j.config.symbols), [['EOSUSDT']])
      const rows = await t.database.handle.db.selectFrom('backtest_jobs').select('id').where(sql`config::jsonb`, '@>', JSON.stringify({ symbols: ['BTCUSTD'] }) as never).execute()
      assert.deepEqual(rows, [])
    })

    it('refuses a lower-case symbol saying symbols are upper case, and a timeframe outside the set in the one phrasing', async () => {
      const key = await t.createKey([...SCOPES])
      const lower = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, symbols: ['btcusdt'] })
      assert.equal(lower.statusCode, 400, lower.body)
      assert.equal(lower.json().error.field, 'symbols.0')
      assert.equal(lower.json().error.message, 'symbols.0: symbols are upper case, e.g. BTCUSDT; got "btcusdt", send "BTCUSDT"')
      const dashed = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, symbols: ['BTC-USDT'] })
      assert.equal(dashed.json().error.message, 'symbols.0: a symbol is 2 to 30 upper-case letters and digits, e.g. BTCUSDT; got "BTC-USDT"')
      const timeframe = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...job, timeframe: '1H' })
      assert.equal(timeframe.json().error.message, 'timeframe: must be one of 1m, 5m, 15m, 1h, 4h, 1d; got "1H"')
      assert.deepEqual((await t.signed(key, 'GET', '/v1/backtest/jobs')).json().data, [])
    })

    it("merges a stored strategy under the request; 409 for a deleted one, 404 for another user's", async () => {
      const key = await t.createKey([...SCOPES])
      const strategy = { name: 's', template_id: 'ema_cross', params: {}, symbols: ['ETHUSDT'], timeframe: '4h', capital: '5000', leverage: 2 }
      const id = (await t.signed(key, 'POST', '/v1/strategies', strategy)).json().id
      const res = await t.signed(key, 'POST', '/v1/backtest/jobs', { strategy_id: id, start: job.start, end: job.end, capital: '7000' })
      assert.equal(res.statusCode, 200, res.body)
      const config = res.json().config
      assert.deepEqual([config.template_id, config.symbols, config.timeframe, config.capital, config.leverage, config.strategy_id], ['ema_cross', ['ETHUSDT'], '4h', '7000', 2, id])
      const other = await t.createKey([...SCOPES])
      assert.equal((await t.signed(other, 'POST', '/v1/backtest/jobs', { strategy_id: id, start: job.start, end: job.end })).statusCode, 404)
      assert.equal((await t.signed(key, 'DELETE', `/v1/strategies/${id}`)).statusCode, 204)
      const deleted = await t.signed(key, 'POST', '/v1/backtest/jobs', { strategy_id: id, start: job.start, end: job.end })
      assert.equal(deleted.statusCode, 409)
      assert.equal(deleted.json().error.code, 'INVALID_STATE')
    })

    it('limits polling one job to once per 5 s; Retry-After and RateLimit give the whole seconds left', async () => {
      const key = await t.createKey([...SCOPES])
      const id = (await t.signed(key, 'POST', '/v1/backtest/jobs', job)).json().id
      assert.equal((await t.signed(key, 'GET', `/v1/backtest/jobs/${id}`)).statusCode, 200)
      const fast = await t.signed(key, 'GET', `/v1/backtest/jobs/${id}`)
      assert.equal(fast.statusCode, 429)
      assert.equal(fast.json().error.code, 'RATE_LIMITED')
      assert.equal(fast.headers['retry-after'], '5', '4999 ms left')
      // (t.signed moves the clock 1 ms per request.) 3.4 s after the poll, 1600 ms are left: 2 s.
      t.clock.advance(3398)
      const later = await t.signed(key, 'GET', `/v1/backtest/jobs/${id}`)
      assert.equal(later.statusCode, 429)
      assert.equal(later.headers['retry-after'], '2')
      assert.match(later.json().error.message, /retry in 2 s/)
      assert.match(String(later.headers['ratelimit-policy']), /^"default";q=1200;w=60, "poll";q=1;w=5$/)
      assert.match(String(later.headers.ratelimit), /^"default";r=\d+;t=\d+, "poll";r=0;t=2$/)
      t.clock.advance(1598)
      const last = await t.signed(key, 'GET', `/v1/backtest/jobs/${id}`)
      assert.equal(last.headers['retry-after'], '1', '1 ms left is still a whole second')
      assert.equal((await t.signed(key, 'GET', `/v1/backtest/jobs/${id}`)).statusCode, 200, 'exactly 5 s after the first poll')
    })

    it('cancels a queued job keeping its progress; 409 once terminal; 404 for another user; reason ≤ 200', async () => {
      const key = await t.createKey([...SCOPES])
      const id = (await t.signed(key, 'POST', '/v1/backtest/jobs', job)).json().id
      const other = await t.createKey([...SCOPES])
      assert.equal((await t.signed(other, 'POST', `/v1/backtest/jobs/${id}/cancel`)).statusCode, 404)
      assert.equal((await t.signed(key, 'POST', `/v1/backtest/jobs/${id}/cancel`, { reason: 'x'.repeat(201) })).statusCode, 400)
      const res = await t.signed(key, 'POST', `/v1/backtest/jobs/${id}/cancel`, { reason: 'changed my mind' })
      assert.equal(res.statusCode, 200, res.body)
      const cancelled = res.json()
      assert.equal(cancelled.status, 'cancelled')
      assert.equal(cancelled.finished_at, new Date(t.clock.now()).toISOString())
      assert.deepEqual([cancelled.result, cancelled.error, cancelled.progress, cancelled.started_at], [null, null, 0, null])
      const again = await t.signed(key, 'POST', `/v1/backtest/jobs/${id}/cancel`)
      assert.equal(again.statusCode, 409)
      assert.equal(again.json().error.code, 'INVALID_STATE')
      const noBody = await t.signed(key, 'POST', `/v1/backtest/jobs/${(await t.signed(key, 'POST', '/v1/backtest/jobs', job)).json().id}/cancel`)
      assert.equal(noBody.statusCode, 200, noBody.body)
    })

    it('lists newest first with status, template and time filters and a cursor', async () => {
      const key = await t.createKey([...SCOPES])
      const ids: string[] = []
      for (let i = 0; i < 3; i++) {
        t.clock.advance(1000)
        ids.push((await t.signed(key, 'POST', '/v1/backtest/jobs', job)).json().id)
      }
      await t.signed(key, 'POST', `/v1/backtest/jobs/${ids[0]}/cancel`)
      const page1 = (await t.signed(key, 'GET', '/v1/backtest/jobs?limit=2')).json()
      assert.deepEqual(page1.data.map((j: { id: string }) => j.id), [ids[2], ids[1]])
      const page2 = (await t.signed(key, 'GET', `/v1/backtest/jobs?limit=2&cursor=${page1.next_cursor}`)).json()
      assert.deepEqual(page2.data.map((j: { id: string }) => j.id), [ids[0]])
      assert.equal(page2.next_cursor, null)
      const cancelled = (await t.signed(key, 'GET', '/v1/backtest/jobs?status=cancelled')).json().data
      assert.deepEqual(cancelled.map((j: { id: string }) => j.id), [ids[0]])
      assert.deepEqual((await t.signed(key, 'GET', '/v1/backtest/jobs?template_id=macd')).json().data, [])
      const [newest, middle] = page1.data as { submitted_at: string }[]
      const from = (await t.signed(key, 'GET', `/v1/backtest/jobs?from=${newest!.submitted_at}`)).json().data
      assert.deepEqual(from.map((j: { id: string }) => j.id), [ids[2]], 'from is inclusive')
      const to = (await t.signed(key, 'GET', `/v1/backtest/jobs?to=${newest!.submitted_at}&from=${middle!.submitted_at}`)).json().data
      assert.deepEqual(to.map((j: { id: string }) => j.id), [ids[1]], 'to is exclusive')
      for (const bad of ['status=nope', 'limit=0', 'limit=101', 'from=yesterday', 'cursor=***']) {
        assert.equal((await t.signed(key, 'GET', `/v1/backtest/jobs?${bad}`)).statusCode, 400, bad)
      }
    })
  })
}
