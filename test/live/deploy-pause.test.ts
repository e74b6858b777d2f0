import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { PaperBroker } from '../../src/live/brokers/paper-broker.js'
import { PAPER_FEES } from '../../src/live/brokers/paper-setup.js'
import { findTemplate } from '../../src/templates/registry.js'
import type { SingleSymbolTemplate } from '../../src/templates/types.js'
import { BTCUSDT_RULES } from '../engine/helpers.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'

const base = { name: 'trend', template_id: 'sma_cross', params: { fast: 10, slow: 30 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' }

for (const backend of backends()) {
  describe(`deploy and pause (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    let other: KeyPair
    const create = async (k: KeyPair = key, fields: Record<string, unknown> = {}) => {
      const res = await t.signed(k, 'POST', '/v1/strategies', { ...base, ...fields })
      assert.equal(res.statusCode, 200, res.body)
      return res.json().id as string
    }
    const events = async (strategyId: string) =>
      (await t.database.handle.db.selectFrom('events').select(['type', 'data']).orderBy('seq').execute()).filter((e: { data: unknown }) => (e.data as { strategy_id?: string }).strategy_id === strategyId)
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true })
      key = await t.createKey(['strategies:read', 'strategies:write'])
      other = await t.createKey(['strategies:read', 'strategies:write'])
    })
    after(() => t.close())

    it('deploys a draft as a dry run: status deployed, deployed_at now, a run row with the overrides, the stored definition unchanged, strategy.deployed', async () => {
      const id = await create()
      const res = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true, capital: '500', leverage: 3 })
      assert.equal(res.statusCode, 200, res.body)
      const s = res.json()
      const now = new Date(t.clock.now()).toISOString()
      assert.equal(s.status, 'deployed')
      assert.equal(s.deployed_at, now)
      assert.equal(s.updated_at, now)
      assert.equal(s.capital, '1000', 'overrides are for this run only')
      assert.equal(s.leverage, 1)
      const run = await t.database.handle.db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', id).executeTakeFirstOrThrow()
      assert.equal(Number(run.capital), 500)
      assert.equal(run.leverage, 3)
      assert.equal(run.dry_run, true)
      assert.equal(run.ended_at, null)
      const deployed = (await events(id)).find((e: { type: string }) => e.type === 'strategy.deployed')
      assert.deepEqual(deployed?.data, { strategy_id: id, dry_run: true, capital: '500', leverage: 3, deployed_at: now })
    })

    it('answers every deploy error of the spec and changes nothing', async () => {
      key = await t.createKey(['strategies:read', 'strategies:write'])
      const id = await create()
      const cases: [Record<string, unknown>, number, string, RegExp][] = [
        [{ dry_run: true, capital: '199' }, 400, 'INVALID_PARAMETER', /at least 200/],
        [{ dry_run: true, capital: 'lots' }, 400, 'INVALID_PARAMETER', /capital/],
        [{ dry_run: true, leverage: 21 }, 400, 'INVALID_PARAMETER', /leverage/],
        [{ dry_run: true, leverage: 0 }, 400, 'INVALID_PARAMETER', /leverage/],
        [{ dry_run: 'yes' }, 400, 'INVALID_PARAMETER', /dry_run/],
        [{ dry_run: true, capital: '10000.01' }, 402, 'INSUFFICIENT_FUNDS', /paper wallet/],
        [{ dry_run: false }, 409, 'INVALID_STATE', /verified exchange key/],
      ]
      for (const [body, status, code, message] of cases) {
        const res = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, body)
        assert.equal(res.statusCode, status, `${JSON.stringify(body)}: ${res.body}`)
        assert.equal(res.json().error.code, code)
        assert.match(res.json().error.message, message)
      }
      assert.equal((await t.signed(key, 'GET', `/v1/strategies/${id}`)).json().status, 'draft')
      const runs = await t.database.handle.db.selectFrom('strategy_runs').select('run').where('strategy_id', '=', id).execute()
      assert.equal(runs.length, 0)
      assert.equal((await t.signed(other, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })).statusCode, 404, "another user's strategy is not found")
      assert.equal((await t.signed(key, 'POST', '/v1/strategies/strat_00000000/deploy', { dry_run: true })).statusCode, 404)
    })

    it('a strategy with exits: a live deploy passes the exits (they rest on the exchange) and meets the account checks; a dry run carries the exits into its run', async () => {
      const user = await t.createKey(['strategies:read', 'strategies:write'])
      const exits = { stop_loss: '0.02', trailing_stop: '0.01' }
      const id = await create(user, { exits, symbols: ['ETHUSDT'], capital: '300' })
      for (const body of [{}, { dry_run: false }]) {
        const live = await t.signed(user, 'POST', `/v1/strategies/${id}/deploy`, body)
        assert.equal(live.statusCode, 409, live.body)
        assert.match(live.json().error.message, /verified exchange key/)
      }
      assert.equal((await t.signed(user, 'GET', `/v1/strategies/${id}`)).json().status, 'draft')
      assert.equal((await t.database.handle.db.selectFrom('strategy_runs').select('run').where('strategy_id', '=', id).execute()).length, 0)
      assert.deepEqual(await events(id), [])
      assert.equal((await t.signed(other, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })).statusCode, 404, "another user's strategy is not found")

      const dry = await t.signed(user, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
      assert.equal(dry.statusCode, 200, dry.body)
      assert.deepEqual(dry.json().exits, { ...exits, trigger: 'last' })
      const run = await t.database.handle.db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', id).executeTakeFirstOrThrow()
      assert.deepEqual(run.exits, exits)
      // Exits removed while paused: the next run has none.
      assert.equal((await t.signed(user, 'POST', `/v1/strategies/${id}/pause`, {})).statusCode, 200)
      assert.equal((await t.signed(user, 'PATCH', `/v1/strategies/${id}`, { exits: null })).statusCode, 200)
      assert.equal((await t.signed(user, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })).statusCode, 200)
      const runs = await t.database.handle.db.selectFrom('strategy_runs').select(['run', 'exits']).where('strategy_id', '=', id).orderBy('run').execute()
      assert.deepEqual(runs, [{ run: 1, exits }, { run: 2, exits: null }])
    })

    it("a paused dry run's position: its levels shown by positions; a resume keeps its levels and best price, or derives them afresh when the exits changed", async () => {
      const user = await t.createKey(['strategies:read', 'strategies:write'])
      const id = await create(user, { exits: { stop_loss: '0.02', trailing_stop: '0.01' }, capital: '1000' })
      assert.equal((await t.signed(user, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })).statusCode, 200)
      // The run's ledger as a runner would have saved it: long 0.01 at 50,000, trailing from a best price of 51,000.
      const params = { fast: 10, slow: 30, allow_short: false }
      const setup = { template: findTemplate('sma_cross') as SingleSymbolTemplate, params, symbol: 'BTCUSDT', intervalMs: 3_600_000, rules: BTCUSDT_RULES, capital: 1000, leverage: 1, fees: PAPER_FEES }
      const broker = new PaperBroker({ ...setup, protect: { rules: { stopLoss: 0.02, trailingStop: 0.01, trigger: 'last' } } })
      broker.fillAt(0.01, 50_000, Date.UTC(2025, 5, 1))
      broker.ledger.exits!.exitBest[0] = 51_000
      broker.lastClose = 50_800
      const db = t.database.handle.db
      await db.updateTable('strategy_runs').set({ state: JSON.stringify({ broker: broker.snapshot(), pendingOrder: null }) }).where('strategy_id', '=', id).execute()
      assert.equal((await t.signed(user, 'POST', `/v1/strategies/${id}/pause`, {})).statusCode, 200)

      const [shown] = (await t.signed(user, 'GET', `/v1/strategies/${id}/positions`)).json()
      assert.deepEqual(
        [shown.side, shown.qty, shown.stop_price, shown.take_profit_price, shown.trailing, shown.trigger],
        ['buy', '0.01', '49000', null, { activation_price: null, best_price: '51000', stop_price: '50490' }, 'last'],
      )
      assert.equal((await t.signed(other, 'GET', `/v1/strategies/${id}/positions`)).statusCode, 404)

      const carried = async () => {
        const run = await db.selectFrom('strategy_runs').select(['run', 'state']).where('strategy_id', '=', id).orderBy('run', 'desc').executeTakeFirstOrThrow()
        return { run: run.run, arrays: (run.state as { broker: { ledger: { arrays: Record<string, (number | null)[]> } } }).broker.ledger.arrays }
      }
      // Resumed with the same exits: the saved levels and best price as they were.
      assert.equal((await t.signed(user, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })).statusCode, 200)
      const same = await carried()
      assert.equal(same.run, 2)
      assert.deepEqual([same.arrays.qty![0], same.arrays.exitStop![0], same.arrays.exitBest![0]], [0.01, 49_000, 51_000])
      // Exits changed while paused: the carried position is protected by the new ones, from its entry price.
      assert.equal((await t.signed(user, 'POST', `/v1/strategies/${id}/pause`, {})).statusCode, 200)
      assert.equal((await t.signed(user, 'PATCH', `/v1/strategies/${id}`, { exits: { take_profit: '0.05', trailing_stop: '0.01', trailing_activation: '0.01' } })).statusCode, 200)
      assert.equal((await t.signed(user, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })).statusCode, 200)
      const changed = await carried()
      assert.equal(changed.run, 3)
      assert.deepEqual(
        [changed.arrays.qty![0], changed.arrays.exitStop![0], changed.arrays.exitTake![0], changed.arrays.exitActivation![0], changed.arrays.exitBest![0]],
        [0.01, null, 52_500, 50_500, null],
      )
      // Exits removed: the run protects nothing but its liquidation price.
      assert.equal((await t.signed(user, 'POST', `/v1/strategies/${id}/pause`, {})).statusCode, 200)
      assert.equal((await t.signed(user, 'PATCH', `/v1/strategies/${id}`, { exits: null })).statusCode, 200)
      assert.equal((await t.signed(user, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })).statusCode, 200)
      const none = await carried()
      assert.deepEqual([none.run, none.arrays.qty![0], none.arrays.exitStop], [4, 0.01, undefined])
      const [bare] = (await t.signed(user, 'GET', `/v1/strategies/${id}/positions`)).json()
      assert.deepEqual([bare.stop_price, bare.take_profit_price, bare.trailing, bare.trigger], [null, null, null, null])
    })

    it('402 counts the capital of the other deployed dry runs; a second dry run on the same symbol trades its own ledger', async () => {
      const user = await t.createKey(['strategies:read', 'strategies:write'])
      const a = await create(user, { capital: '6000' })
      assert.equal((await t.signed(user, 'POST', `/v1/strategies/${a}/deploy`, { dry_run: true })).statusCode, 200)
      const b = await create(user, { capital: '5000', symbols: ['ETHUSDT'] })
      const poor = await t.signed(user, 'POST', `/v1/strategies/${b}/deploy`, { dry_run: true })
      assert.equal(poor.statusCode, 402, poor.body)
      assert.equal((await t.signed(user, 'POST', `/v1/strategies/${b}/deploy`, { dry_run: true, capital: '3000' })).statusCode, 200)
      const c = await create(user, { capital: '200', template_id: 'ema_cross', params: {} })
      const second = await t.signed(user, 'POST', `/v1/strategies/${c}/deploy`, { dry_run: true })
      assert.equal(second.statusCode, 200, second.body)
      const runs = await t.database.handle.db.selectFrom('strategy_runs').select(['strategy_id', 'symbol', 'symbols']).where('strategy_id', 'in', [a, c]).orderBy('strategy_id').execute()
      assert.deepEqual(runs.map((r) => [r.symbol, r.symbols]), [['BTCUSDT', ['BTCUSDT']], ['BTCUSDT', ['BTCUSDT']]])
    })

    it('deploys a many-symbol template as a dry run holding every symbol; live meets the live checks (no verified exchange key: 409) and changes nothing', async () => {
      const user = await t.createKey(['strategies:read', 'strategies:write'])
      const fields = { template_id: 'cross_sectional_momentum', params: { lookback: 5 }, symbols: ['ETHUSDT', 'BTCUSDT'], capital: '1000' }
      const live = await create(user, fields)
      const refused = await t.signed(user, 'POST', `/v1/strategies/${live}/deploy`, { dry_run: false })
      assert.equal(refused.statusCode, 409, refused.body)
      assert.equal(refused.json().error.code, 'INVALID_STATE')
      assert.match(refused.json().error.message, /exchange key/)
      assert.equal((await t.signed(user, 'GET', `/v1/strategies/${live}`)).json().status, 'draft')
      const dry = await t.signed(user, 'POST', `/v1/strategies/${live}/deploy`, { dry_run: true })
      assert.equal(dry.statusCode, 200, dry.body)
      const run = await t.database.handle.db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', live).executeTakeFirstOrThrow()
      assert.deepEqual([run.symbol, run.symbols], ['ETHUSDT', ['ETHUSDT', 'BTCUSDT']])
    })

    it('refuses deploy unless draft or paused, pause unless deployed (pausing twice is an error), PATCH while deployed', async () => {
      key = await t.createKey(['strategies:read', 'strategies:write'])
      const id = await create()
      const pauseDraft = await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})
      assert.equal(pauseDraft.statusCode, 409)
      assert.equal(pauseDraft.json().error.code, 'INVALID_STATE')
      await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true, capital: '200' })
      const again = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true, capital: '200' })
      assert.equal(again.statusCode, 409)
      assert.equal((await t.signed(key, 'PATCH', `/v1/strategies/${id}`, { params: { fast: 5, slow: 20 } })).statusCode, 409)
      assert.equal((await t.signed(other, 'POST', `/v1/strategies/${id}/pause`, {})).statusCode, 404)
      const paused = await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})
      assert.equal(paused.statusCode, 200, paused.body)
      assert.equal(paused.json().status, 'paused')
      const twice = await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})
      assert.equal(twice.statusCode, 409)
      const types = (await events(id)).map((e: { type: string }) => e.type)
      assert.deepEqual(types, ['strategy.deployed', 'strategy.paused'])
      const run = await t.database.handle.db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', id).executeTakeFirstOrThrow()
      assert.ok(run.ended_at, 'the pause ended the run')
    })

    it('resumes a paused strategy with the params changed while paused, as a new run', async () => {
      const id = await create(key, { capital: '300', symbols: ['XRPUSDT'] })
      await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
      await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})
      const patched = await t.signed(key, 'PATCH', `/v1/strategies/${id}`, { params: { fast: 5, slow: 20 } })
      assert.equal(patched.statusCode, 200, patched.body)
      const resumed = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
      assert.equal(resumed.statusCode, 200, resumed.body)
      const runs = await t.database.handle.db.selectFrom('strategy_runs').selectAll().where('strategy_id', '=', id).orderBy('run').execute()
      assert.deepEqual(runs.map((r: { run: number; params: unknown; ended_at: Date | null }) => [r.run, r.params, r.ended_at === null]), [
        [1, { fast: 10, slow: 30, allow_short: false }, false],
        [2, { fast: 5, slow: 20, allow_short: false }, true],
      ])
    })

    it('stopped and error: deploy and pause are 409 (spec); an edit returns the strategy to draft, which deploys', async () => {
      for (const status of ['stopped', 'error'] as const) {
        const id = await create(key, { symbols: ['SOLUSDT'], capital: '200' })
        await t.database.handle.db.updateTable('strategies').set({ status }).where('id', '=', id).execute()
        const deploy = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
        assert.equal(deploy.statusCode, 409, deploy.body)
        assert.match(deploy.json().error.message, new RegExp(`is ${status}`))
        assert.equal((await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})).statusCode, 409)
        const edited = await t.signed(key, 'PATCH', `/v1/strategies/${id}`, { name: 'fixed' })
        assert.equal(edited.statusCode, 200, edited.body)
        assert.equal(edited.json().status, 'draft')
        const again = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
        assert.equal(again.statusCode, 200, again.body)
        assert.equal((await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, {})).statusCode, 200)
      }
    })

    it('400 when the stored params no longer validate', async () => {
      const id = await create(key, { symbols: ['ETHUSDT'], capital: '200' })
      await t.database.handle.db.updateTable('strategies').set({ params: JSON.stringify({ fast: 50, slow: 30 }) }).where('id', '=', id).execute()
      const res = await t.signed(key, 'POST', `/v1/strategies/${id}/deploy`, { dry_run: true })
      assert.equal(res.statusCode, 400, res.body)
      assert.equal(res.json().error.field, 'params.fast')
    })
  })
}
