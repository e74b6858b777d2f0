import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { findCustomVersion } from '../../src/custom-templates/queries.js'
import { customTemplate } from '../../src/custom-templates/sandbox/custom-template.js'
import { StrategyInstance } from '../../src/custom-templates/sandbox/strategy-instance.js'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'
import { assertBacktestParity, runState } from '../live/backtest-parity.js'

const MINUTE = 60_000
const SPEED = 300
const REPLAY_START = Date.UTC(2025, 5, 17, 6, 0, 0)
const SMA_PORT = readFileSync(new URL('../../examples/strategies/sma-cross.js', import.meta.url), 'utf8')
const PARAMS = { fast: 3, slow: 8, allow_short: true }

async function upload(t: TestApp, key: KeyPair, source: string): Promise<string> {
  const res = await t.signed(key, 'POST', '/v1/templates', { name: 'module', source })
  assert.equal(res.statusCode, 201, res.body)
  return res.json().id
}

async function createDryRun(t: TestApp, key: KeyPair, templateId: string, params: Record<string, unknown> = {}): Promise<string> {
  const created = await t.signed(key, 'POST', '/v1/strategies', { name: 'custom', template_id: templateId, params, symbols: ['BTCUSDT'], timeframe: '1m', capital: '1000', leverage: 2 })
  assert.equal(created.statusCode, 200, created.body)
  const id = created.json().id as string
  const deployed = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
  assert.equal(deployed.statusCode, 200, deployed.body)
  return id
}

// PGlite only: the sandbox side of a run does not touch the database; the run's storage is tested on both in test/live.
describe('dry runs of custom templates', () => {
  let t: TestApp
  let pool: RunnerPool
  let key: KeyPair
  before(async () => {
    t = await startTestApp('pglite', {}, { replay: { speed: SPEED, replayStart: REPLAY_START } })
    pool = new RunnerPool({ db: t.database.handle.db, market: t.services.market, wsUrl: t.replay!.wsUrl, log: pino({ level: 'silent' }), signals: t.services.runSignals })
    pool.start()
    key = await t.createKey(['strategies:read', 'strategies:write'])
  })
  after(async () => {
    await pool.stop()
    await t.close()
  })

  it('trades exactly as its own backtest over the same bars, at the version it pinned', async () => {
    const templateId = await upload(t, key, SMA_PORT)
    const id = await createDryRun(t, key, templateId, PARAMS)
    const strategy = (await t.signed(key, 'GET', `/v1/strategies/${id}`)).json()
    assert.equal(strategy.template_version, 1)
    // A new version uploaded while the run goes on changes nothing of it: it keeps version 1.
    const put = await t.signed(key, 'PUT', `/v1/templates/${templateId}`, { source: SMA_PORT.replace('return target', 'return Number.isNaN(target) ? NaN : -target') })
    assert.equal(put.statusCode, 200, put.body)
    const db = t.database.handle.db
    await poll('the run to act on 60 bars with at least 3 closed trades', 60_000, async () => {
      const s = await runState(t, id)
      const trades = await db.selectFrom('strategy_trades').select('id').where('strategy_id', '=', id).execute()
      return s && s.broker.lastOpenTime !== null && s.broker.lastOpenTime >= s.firstActive + 60 * MINUTE && trades.length >= 3 ? s : undefined
    })
    const paused = await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, { close_positions: false })
    assert.equal(paused.statusCode, 200, paused.body)

    const run = await db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', id).executeTakeFirstOrThrow()
    assert.equal(run.template_version, 1)
    const version = (await findCustomVersion(db, run.user_id, templateId, 1))!
    const instance = await StrategyInstance.load(version.compiled.code, run.seed!)
    const template = customTemplate({ id: templateId, version: 1, description: version.description, timeframe: '1m' }, instance)
    await assertBacktestParity(t, id, { params: run.params, capital: 1000, leverage: 2, template })
    instance.dispose()
  })

  it('moves a run whose module throws to error with the reason, and other runs go on', async () => {
    // Other accounts: runs of one account on one symbol would net (and the first test's paused run holds BTCUSDT).
    const key = await t.createKey(['strategies:read', 'strategies:write'])
    const other = await t.createKey(['strategies:read', 'strategies:write'])
    // The upload's smoke run (BTCUSDT in 2021, below 65,000) passes; the replayed June 2025 bars (above 100,000) throw.
    const thrower = await upload(t, key, `export function create() {
  return {
    onBar(bar) { if (bar.close > 90000) throw new RangeError('the module gave up'); return NaN },
  }
}`)
    const healthy = await createDryRun(t, other, await upload(t, other, SMA_PORT), PARAMS)
    const failing = await createDryRun(t, key, thrower)
    await poll('the failing run to move to error', 60_000, async () => {
      const s = (await t.signed(key, 'GET', `/v1/strategies/${failing}`)).json()
      return s.status === 'error' ? s : undefined
    })
    const events = await t.database.handle.db.selectFrom('events').selectAll().where('type', '=', 'strategy.error').execute()
    const event = events.find((e) => (e.data as { strategy_id: string }).strategy_id === failing)
    assert.ok(event, 'strategy.error was recorded')
    assert.equal((event.data as { code: string }).code, 'STRATEGY_ERROR')
    assert.match((event.data as { message: string }).message, /the module gave up \(module\.js 3:\d+\)/, 'the place names the module after its template')
    assert.equal((await t.signed(other, 'GET', `/v1/strategies/${healthy}`)).json().status, 'deployed')
  })

  it("cuts a huge message the module throws to about 1 KiB in the run's last_error and its strategy.error event (issue 37)", async () => {
    const key = await t.createKey(['strategies:read', 'strategies:write'])
    const thrower = await upload(t, key, `export function create() {
  return { onBar(bar) { if (bar.close > 90000) throw new Error('E'.repeat(4e6)); return NaN } }
}`)
    const failing = await createDryRun(t, key, thrower)
    const strategy = await poll('the run to move to error', 60_000, async () => {
      const s = (await t.signed(key, 'GET', `/v1/strategies/${failing}`)).json()
      return s.status === 'error' ? s : undefined
    })
    const lastError = JSON.stringify(strategy.last_error)
    assert.ok(lastError.length < 8 * 1024, `a ${lastError.length}-byte last_error`)
    assert.match(lastError, /E{1000}…\(truncated\)/)
    const events = await t.database.handle.db.selectFrom('events').selectAll().where('type', '=', 'strategy.error').execute()
    const event = events.find((e) => (e.data as { strategy_id: string }).strategy_id === failing)!
    assert.ok(JSON.stringify(event.data).length < 8 * 1024)
  })
})
