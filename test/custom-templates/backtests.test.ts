import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { findCustomVersion } from '../../src/custom-templates/queries.js'
import { jobBudgetMs } from '../../src/custom-templates/sandbox/limits.js'
import { startTestApp, type TestApp } from '../support/app.js'
import type { KeyPair } from '../support/signing.js'

const SMA_PORT = readFileSync(new URL('../../examples/strategies/sma-cross.js', import.meta.url), 'utf8')
const SCOPES = ['backtests:read', 'backtests:write', 'strategies:read', 'strategies:write'] as const
const RANGE = { params: {}, symbols: ['BTCUSDT'], timeframe: '1h', start: '2023-01-01T00:00:00Z', end: '2023-06-30T23:00:00Z', capital: '10000' }

/** Polls a job at most once per 5 s of test clock until it ends. */
async function finished(t: TestApp, key: KeyPair, id: string) {
  const deadline = Date.now() + 60_000
  for (;;) {
    t.clock.advance(5000)
    const body = (await t.signed(key, 'GET', `/v1/backtest/jobs/${id}`)).json()
    if (body.status === 'done' || body.status === 'failed') return body
    if (Date.now() > deadline) assert.fail(`job ${id} still ${body.status}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function upload(t: TestApp, key: KeyPair, name: string, source: string): Promise<string> {
  const res = await t.signed(key, 'POST', '/v1/templates', { name, source })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

async function submit(t: TestApp, key: KeyPair, body: Record<string, unknown>) {
  const res = await t.signed(key, 'POST', '/v1/backtest/jobs', body)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

// Embedded (PGlite) only: what runs the module is the engine thread, the same whatever the database.
describe('backtests of custom templates', () => {
  let t: TestApp
  let key: KeyPair
  let other: KeyPair
  before(async () => {
    // Two engine threads: a hostile job holds one until its budget ends, another user's job takes the other.
    t = await startTestApp('pglite', {}, { replay: true, queue: 'workers', engineThreads: 2 })
    key = await t.createKey([...SCOPES])
    other = await t.createKey([...SCOPES], 'other@example.com')
  })
  after(() => t.close())

  it('a port of sma_cross trades exactly as the built-in, and pins the version, its hash and a seed', async () => {
    const id = await upload(t, key, 'sma port', SMA_PORT)
    const params = { fast: 12, slow: 40, allow_short: true }
    const custom = await submit(t, key, { ...RANGE, template_id: id, params })
    assert.equal(custom.config.template_version, 1)
    assert.match(custom.config.template_sha256, /^[0-9a-f]{64}$/)
    assert.ok(Number.isInteger(custom.config.seed))
    const builtin = await submit(t, key, { ...RANGE, template_id: 'sma_cross', params })
    const [a, b] = [await finished(t, key, custom.id), await finished(t, key, builtin.id)]
    assert.equal(a.status, 'done', JSON.stringify(a.error))
    assert.equal(b.status, 'done', JSON.stringify(b.error))
    assert.ok(b.result.trades.length > 5, 'the range trades')
    assert.deepEqual(a.result.trades, b.result.trades)
    assert.deepEqual(a.result.metrics, b.result.metrics)
    assert.deepEqual(a.result.equity_curve, b.result.equity_curve)
  })

  it("refuses another user's template id as unknown, and bad params naming the field", async () => {
    const id = await upload(t, key, 'mine', SMA_PORT)
    const stranger = await t.signed(other, 'POST', '/v1/backtest/jobs', { ...RANGE, template_id: id })
    assert.equal(stranger.statusCode, 400, stranger.body)
    assert.equal(stranger.json().error.field, 'template_id')
    const bad = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...RANGE, template_id: id, params: { fast: 50, slow: 40 } })
    assert.equal(bad.statusCode, 400, bad.body)
    assert.equal(bad.json().error.field, 'params.fast')
  })

  it('runs a queued job at its pinned version after its template is deleted, and refuses new jobs for it', async () => {
    const id = await upload(t, key, 'to delete', SMA_PORT)
    const job = await submit(t, key, { ...RANGE, template_id: id })
    const deleted = await t.signed(key, 'DELETE', `/v1/templates/${id}`)
    assert.equal(deleted.statusCode, 204, deleted.body)
    const userId = (await t.database.handle.db.selectFrom('custom_templates').select('user_id').where('id', '=', id).executeTakeFirstOrThrow()).user_id
    assert.equal(await findCustomVersion(t.database.handle.db, userId, id, 1), undefined)
    assert.equal((await findCustomVersion(t.database.handle.db, userId, id, 1, true))?.version, 1)
    const done = await finished(t, key, job.id)
    assert.equal(done.status, 'done', JSON.stringify(done.error))
    const refused = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...RANGE, template_id: id })
    assert.equal(refused.statusCode, 400, refused.body)
    assert.equal(refused.json().error.field, 'template_id')
  })

  it('fails a job whose module throws with STRATEGY_ERROR, the file:line:column and the bar, keeping its progress, and the next job runs', async () => {
    const source = `export function create() {
  let n = 0
  return {
    onBar(bar) {
      if (++n === 2500) throw new Error('boom')
      return NaN
    },
  }
}`
    const id = await upload(t, key, 'thrower', source.replace("n === 2500", "n === 1e9"))
    const put = await t.signed(key, 'PUT', `/v1/templates/${id}`, { source })
    assert.equal(put.statusCode, 200, put.body)
    const job = await submit(t, key, { ...RANGE, template_id: id })
    const failed = await finished(t, key, job.id)
    assert.equal(failed.status, 'failed')
    assert.equal(failed.error.code, 'STRATEGY_ERROR')
    // The upload's smoke run covers 2,000 bars; the job's 2,500th bar (no gaps in this range) is where it throws.
    const bar = new Date(Date.parse(RANGE.start) + 2499 * 3_600_000).toISOString()
    assert.equal(failed.config.template_version, 2)
    // The place names the module as uploaded: the template's name with its language's extension (issue 35).
    assert.match(failed.error.message, new RegExp(`boom \\(thrower\\.js 5:\\d+\\) \\(bar ${bar.replaceAll('.', '\\.')}\\)`))
    // Its history loaded (the first tenth of progress; the engine reports every 65,536 bars, so nothing more in
    // 4,344) before the module threw: the job keeps that, not what its last heartbeat (every 500 ms) had recorded.
    assert.equal(failed.progress, 0.1)
    const next = await finished(t, key, (await submit(t, key, { ...RANGE, template_id: 'sma_cross' })).id)
    assert.equal(next.status, 'done')
  })

  it("gives the module each bar's quote volume and number of trades, as the exchange's klines have them", async () => {
    // The module shows what it received by throwing at its 2,500th bar (past the upload's 2,000-bar smoke run).
    const source = `export function create() {
  let n = 0
  return {
    onBar(bar) {
      if (++n === 2500) throw new Error('seen ' + JSON.stringify([bar.open_time, bar.quote_volume, bar.trades]))
      return NaN
    },
  }
}`
    const id = await upload(t, key, 'reader', source)
    const failed = await finished(t, key, (await submit(t, key, { ...RANGE, template_id: id })).id)
    assert.equal(failed.error?.code, 'STRATEGY_ERROR', JSON.stringify(failed.error))
    const [openTime, quoteVolume, trades] = JSON.parse(/seen (\[[^\]]*\])/.exec(failed.error.message)![1]!) as number[]
    assert.equal(openTime, Date.parse(RANGE.start) + 2499 * 3_600_000)
    const kline = ((await (await fetch(`${t.replay!.url}/fapi/v1/klines?symbol=BTCUSDT&interval=1h&startTime=${openTime}&limit=1`)).json()) as unknown[][])[0]!
    assert.equal(kline[0], openTime)
    assert.ok(quoteVolume! > 0 && trades! > 0, `finite values, not NaN: ${quoteVolume} ${trades}`)
    assert.equal(quoteVolume, Number(kline[7]))
    assert.equal(trades, Number(kline[8]))
  })

  it("takes a module's stop_price into the backtest, and refuses a malformed level at upload and at run time naming the key and the bar", async () => {
    // A long from the 100th bar with a stop 1 % under each close, moved up bar by bar until it fills. The module's
    // later 1s do not re-enter: after a protective exit only a target other than the one in force does (the latch).
    const trailing = `export function create() {
  let n = 0
  return { onBar(bar) { return ++n < 100 ? NaN : n % 50 === 0 ? { target: 1, stop_price: bar.close * 0.99 } : { target: NaN, stop_price: bar.close * 0.99 } } }
}`
    const job = await finished(t, key, (await submit(t, key, { ...RANGE, template_id: await upload(t, key, 'stops', trailing) })).id)
    assert.equal(job.status, 'done', JSON.stringify(job.error))
    assert.deepEqual(
      job.result.trades.map((trade: { entry_time: string; exit_reason: string }) => [trade.entry_time, trade.exit_reason]),
      [[new Date(Date.parse(RANGE.start) + 100 * 3_600_000).toISOString(), 'stop_loss']],
    )
    // A module's levels are known only from its answers: the job ran again on the finer bars the exchange has
    // (the replay's 5m over 2023), so the stop was judged inside each hour, not on the hour itself.
    assert.deepEqual(Object.keys(job.result.exit_resolution.BTCUSDT), ['5m'])

    // In the upload's smoke run (its 10th bar): 400 on source, naming the step, the key and the bar.
    const refused = await t.signed(key, 'POST', '/v1/templates', {
      name: 'bad stop',
      source: 'export function create() { let n = 0; return { onBar(bar) { return ++n === 10 ? { target: 1, stop_price: -5 } : NaN } } }',
    })
    assert.equal(refused.statusCode, 400, refused.body)
    assert.equal(refused.json().error.field, 'source')
    const smokeBar = Date.UTC(2021, 0, 1, 9)
    assert.match(refused.json().error.message, new RegExp(`^the smoke run .* failed: onBar returned stop_price -5 for the bar at ${smokeBar}; a price is a finite number > 0`))
    const unknown = await t.signed(key, 'POST', '/v1/templates', { name: 'bad key', source: 'export function create() { return { onBar() { return { target: NaN, stop: 1 } } } }' })
    assert.equal(unknown.statusCode, 400, unknown.body)
    assert.match(unknown.json().error.message, /onBar returned an object with the unknown key "stop" for the bar at \d+; its keys are target, stop_price and take_profit_price/)

    // Past the smoke run's 2,000 bars, at the job's 2,500th: the job fails with the code, the key and the bar, and the next job runs.
    const late = `export function create() {
  let n = 0
  return { onBar(bar) { return ++n === 2500 ? { target: 1, take_profit_price: Infinity } : NaN } }
}`
    const failed = await finished(t, key, (await submit(t, key, { ...RANGE, template_id: await upload(t, key, 'late', late) })).id)
    assert.equal(failed.status, 'failed')
    assert.equal(failed.error.code, 'STRATEGY_INVALID_OUTPUT')
    const at = Date.parse(RANGE.start) + 2499 * 3_600_000
    assert.equal(failed.error.message, `onBar returned take_profit_price Infinity for the bar at ${at}; a price is a finite number > 0, null to remove the level, or absent to keep it (bar ${new Date(at).toISOString()})`)
    assert.equal((await finished(t, key, (await submit(t, key, { ...RANGE, template_id: 'sma_cross' })).id)).status, 'done')
  })

  it("gives a job the budget its module's measured cost earns: one cheap at upload and looping from bar 2,500 fails STRATEGY_TIMEOUT at it, under the flat budget; an honest heavy one finishes", async () => {
    // The upload's smoke run covers 2,000 bars, so the loop is never met there: the module is measured cheap.
    const looping = `export function create() {
  let n = 0
  return { onBar() { if (++n >= 2500) for (;;) {} return NaN } }
}`
    // Honest and heavy: the same work every bar, so the smoke run measures what the job costs.
    const heavy = `export function create() {
  let s = 0
  return { onBar(bar) { for (let i = 0; i < 1000; i++) s += Math.sqrt(i + bar.close); return s < 0 ? 1 : NaN } }
}`
    const costOf = async (id: string) =>
      (await t.database.handle.db.selectFrom('custom_template_versions').select('smoke_us_per_bar').where('template_id', '=', id).executeTakeFirstOrThrow()).smoke_us_per_bar!
    const [loopId, heavyId] = [await upload(t, key, 'late loop', looping), await upload(t, key, 'heavy', heavy)]
    const [loopCost, heavyCost] = [await costOf(loopId), await costOf(heavyId)]
    assert.ok(loopCost > 0 && heavyCost > 5 * loopCost, `measured per bar: ${loopCost} µs cheap, ${heavyCost} µs heavy`)
    const bars = (Date.parse(RANGE.end) - Date.parse(RANGE.start)) / 3_600_000 + 1
    const budget = jobBudgetMs(bars, loopCost)
    assert.ok(budget < jobBudgetMs(bars), `derived ${budget} ms, flat ${jobBudgetMs(bars)} ms`)

    const [loopJob, heavyJob] = [await submit(t, key, { ...RANGE, template_id: loopId }), await submit(t, key, { ...RANGE, template_id: heavyId })]
    const stopped = await finished(t, key, loopJob.id)
    assert.equal(stopped.status, 'failed')
    assert.equal(stopped.error.code, 'STRATEGY_TIMEOUT')
    assert.equal(stopped.error.message, `the strategy ran longer than its budget of ${budget} ms`)
    const honest = await finished(t, key, heavyJob.id)
    assert.equal(honest.status, 'done', JSON.stringify(honest.error))
  })

  it('stops a module that loops in native code at its budget while another user’s job finishes in normal time', async () => {
    // Passes the upload's smoke run (it only loops from the 3,000th bar on), then hangs in a builtin.
    const source = `export function create() {
  let n = 0
  return { onBar() { if (++n === 3000) Array.prototype.indexOf.call({ length: 2 ** 31 }, 1); return NaN } }
}`
    const id = await upload(t, key, 'hang', source)
    const hostile = await submit(t, key, { ...RANGE, template_id: id })
    const started = Date.now()
    const normal = await finished(t, other, (await submit(t, other, { ...RANGE, template_id: 'sma_cross' })).id)
    assert.equal(normal.status, 'done')
    assert.ok(Date.now() - started < 15_000, 'the other job did not wait for the hostile one')
    assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
    const stopped = await finished(t, key, hostile.id)
    assert.equal(stopped.status, 'failed')
    assert.equal(stopped.error.code, 'STRATEGY_TIMEOUT')
  })
})
