import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'

const base = {
  template_id: 'sma_cross',
  params: { fast: 10, slow: 30 },
  timeframe: '1h',
  capital: '10000',
}
const HOUR = 3_600_000
/** The replay exchange's default start: its clock, months behind ours (src/replay-exchange/README.md "Time"). */
const REPLAY_START = Date.parse('2025-06-17T08:38:08Z')

async function pollUntilTerminal(t: TestApp, key: KeyPair, id: string) {
  const deadline = Date.now() + 60_000
  for (;;) {
    t.clock.advance(5000)
    const res = await t.signed(key, 'GET', `/v1/backtest/jobs/${id}`)
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    if (body.status === 'done' || body.status === 'failed' || body.status === 'cancelled') return body
    if (Date.now() > deadline) assert.fail(`job ${id} still ${body.status}`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

async function eventOf(t: TestApp, jobId: string) {
  const rows = await t.database.handle.db.selectFrom('events').select(['data']).where('type', '=', 'backtest.job_done').execute()
  const found = rows.map((row) => row.data as Record<string, unknown>).filter((data) => data.job_id === jobId)
  assert.equal(found.length, 1, `one backtest.job_done for ${jobId}`)
  return found[0]!
}

for (const backend of backends()) {
  describe(`backtest coverage and missing data (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'workers' })
      key = await t.createKey(['backtests:read', 'backtests:write'])
    })
    after(() => t.close())

    it('fails a range with no bar at all as NO_DATA, naming symbol, timeframe, range and the coverage that exists', async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...base, symbols: ['BTCUSDT'], start: '2015-01-01T00:00:00Z', end: '2015-12-31T00:00:00Z' })
      assert.equal(created.statusCode, 200, created.body)
      const failed = await pollUntilTerminal(t, key, created.json().id)
      assert.equal(failed.status, 'failed')
      assert.equal(failed.result, null)
      assert.equal(failed.error.code, 'NO_DATA')
      const message: string = failed.error.message
      for (const part of ['BTCUSDT 1h', '2015-01-01T00:00Z', '2015-12-31T00:00Z', 'from 2019-09-08T17:00Z', 'GET /v1/backtest/coverage']) {
        assert.ok(message.includes(part), `${JSON.stringify(part)} in ${message}`)
      }
      // The webhook event carries the outcome as the job does.
      assert.deepEqual(await eventOf(t, failed.id), { job_id: failed.id, status: 'failed', template_id: 'sma_cross', error: failed.error })
    })

    it('says when the exchange has no bar of a symbol and timeframe at all (DOGEUSDT 1h on the built-in data)', async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...base, symbols: ['DOGEUSDT'], start: '2024-01-01T00:00:00Z', end: '2024-12-31T00:00:00Z' })
      const failed = await pollUntilTerminal(t, key, created.json().id)
      assert.equal(failed.status, 'failed')
      assert.equal(failed.error.code, 'NO_DATA')
      assert.match(failed.error.message, /no DOGEUSDT 1h bars between 2024-01-01T00:00Z and 2024-12-31T00:00Z; the exchange has no DOGEUSDT 1h bars at all/)
    })

    it('runs a partly covered range to done with one warning per incomplete symbol, in the job and its event', async () => {
      // BTCUSDT's contract opened 2019-09-08 17:00: 7 days and 17 hours of September are missing.
      const created = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...base, symbols: ['BTCUSDT'], start: '2019-09-01T00:00:00Z', end: '2019-09-30T23:00:00Z' })
      const done = await pollUntilTerminal(t, key, created.json().id)
      assert.equal(done.status, 'done', JSON.stringify(done.error))
      const missing = 7 * 24 + 17
      assert.deepEqual(done.result.warnings, [
        `BTCUSDT 1h: ${missing} of 720 bars missing between 2019-09-01T00:00Z and 2019-09-30T23:00Z (bars found from 2019-09-08T17:00Z to 2019-10-01T00:00Z)`,
      ])
      assert.equal(done.result.gaps[0].missing_bars, missing)
      const event = await eventOf(t, done.id)
      assert.equal(event.status, 'done')
      assert.deepEqual(event.warnings, done.result.warnings)
      assert.deepEqual(event.metrics, done.result.metrics)
    })

    it('gives a complete range an empty warnings list', async () => {
      const created = await t.signed(key, 'POST', '/v1/backtest/jobs', { ...base, symbols: ['ETHUSDT'], start: '2023-01-01T00:00:00Z', end: '2023-01-31T23:00:00Z' })
      const done = await pollUntilTerminal(t, key, created.json().id)
      assert.equal(done.status, 'done', JSON.stringify(done.error))
      assert.deepEqual(done.result.warnings, [])
      assert.deepEqual((await eventOf(t, done.id)).warnings, [])
    })

    it('GET /v1/backtest/coverage answers the recorded range, ending at the last bar closed by the exchange clock', async () => {
      const res = await t.signed(key, 'GET', '/v1/backtest/coverage?symbol=BTCUSDT&timeframe=1h')
      assert.equal(res.statusCode, 200, res.body)
      const body = res.json()
      assert.deepEqual(Object.keys(body), ['symbol', 'timeframe', 'start', 'end'])
      assert.equal(body.symbol, 'BTCUSDT')
      assert.equal(body.timeframe, '1h')
      assert.equal(body.start, '2019-09-08T17:00:00.000Z')
      const end = Date.parse(body.end)
      // The replay clock started at REPLAY_START and runs at wall speed: the last closed hour is on the
      // hour, at most an hour before its now, and nowhere near our own clock (2026 and later).
      const replayNow = ((await (await fetch(`${t.replay!.url}/fapi/v1/time`)).json()) as { serverTime: number }).serverTime
      assert.ok(replayNow >= REPLAY_START && replayNow < REPLAY_START + 2 * HOUR)
      assert.equal(end % HOUR, 0)
      assert.ok(end <= replayNow && end > replayNow - HOUR, `${body.end} is the last closed hour before ${new Date(replayNow).toISOString()}`)

      const daily = (await t.signed(key, 'GET', '/v1/backtest/coverage?symbol=DOGEUSDT&timeframe=1d')).json()
      assert.equal(daily.start, '2020-07-10T00:00:00.000Z')
      assert.equal(Date.parse(daily.end) % (24 * HOUR), 0)
      const none = await t.signed(key, 'GET', '/v1/backtest/coverage?symbol=DOGEUSDT&timeframe=1h')
      assert.equal(none.statusCode, 200, none.body)
      assert.deepEqual(none.json(), { symbol: 'DOGEUSDT', timeframe: '1h', start: null, end: null })
    })

    it('refuses an unknown symbol or timeframe with 400 INVALID_PARAMETER naming it', async () => {
      const symbol = await t.signed(key, 'GET', '/v1/backtest/coverage?symbol=NOSUCHUSDT&timeframe=1h')
      assert.equal(symbol.statusCode, 400)
      assert.equal(symbol.json().error.code, 'INVALID_PARAMETER')
      assert.equal(symbol.json().error.field, 'symbol')
      assert.match(symbol.json().error.message, /NOSUCHUSDT/)
      const typo = await t.signed(key, 'GET', '/v1/backtest/coverage?symbol=BTCUSTD&timeframe=1h')
      assert.equal(typo.json().error.message, 'the exchange lists no symbol BTCUSTD; did you mean BTCUSDT?')
      const timeframe = await t.signed(key, 'GET', '/v1/backtest/coverage?symbol=BTCUSDT&timeframe=2h')
      assert.equal(timeframe.statusCode, 400)
      assert.equal(timeframe.json().error.code, 'INVALID_PARAMETER')
      assert.equal(timeframe.json().error.field, 'timeframe')
      assert.match(timeframe.json().error.message, /timeframe: must be one of 1m, 5m, 15m, 1h, 4h, 1d; got "2h"/)
      const missing = await t.signed(key, 'GET', '/v1/backtest/coverage?symbol=BTCUSDT')
      assert.equal(missing.statusCode, 400)
      assert.equal(missing.json().error.field, 'timeframe')
    })

    it('needs a signed request or app token, and the scope backtests:read', async () => {
      const anonymous = await t.app.inject({ method: 'GET', url: '/v1/backtest/coverage?symbol=BTCUSDT&timeframe=1h' })
      assert.equal(anonymous.statusCode, 401)
      assert.equal(anonymous.json().error.code, 'UNAUTHENTICATED')
      const writer = await t.createKey(['strategies:read'])
      const refused = await t.signed(writer, 'GET', '/v1/backtest/coverage?symbol=BTCUSDT&timeframe=1h')
      assert.equal(refused.statusCode, 403)
      assert.equal(refused.json().error.code, 'INSUFFICIENT_PERMISSION')
    })
  })
}
