import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'

const base = { name: 'trend', template_id: 'sma_cross', params: { fast: 10, slow: 30 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000.50' }

for (const backend of backends()) {
  describe(`signed strategy records (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    before(async () => {
      t = await startTestApp(backend)
      key = await t.createKey(['strategies:read', 'strategies:write'])
    })
    after(() => t.close())

    it('creates a draft with the spec record: strat_ id, decimal capital, zeroed stats', async () => {
      const res = await t.signed(key, 'POST', '/v1/strategies', { ...base, leverage: 3 })
      assert.equal(res.statusCode, 200, res.body)
      const s = res.json()
      assert.match(s.id, /^strat_[0-9a-f]{8}$/)
      assert.equal(s.status, 'draft')
      assert.equal(s.capital, '1000.50')
      assert.equal(s.leverage, 3)
      assert.deepEqual(s.params, { ...base.params, allow_short: false }, 'params are stored with the template defaults applied')
      assert.deepEqual(s.symbols, ['BTCUSDT'])
      assert.equal(s.deployed_at, null)
      assert.equal(s.created_at, new Date(t.clock.now()).toISOString())
      assert.deepEqual(s.stats, { open_positions: 0, total_pnl: '0', total_trades: 0, win_rate: '0' })
      const read = await t.signed(key, 'GET', `/v1/strategies/${s.id}`)
      assert.deepEqual(read.json(), s)
    })

    it("defaults leverage to 1 and params to the template's defaults", async () => {
      const { params: _, ...withoutParams } = base
      const s = (await t.signed(key, 'POST', '/v1/strategies', withoutParams)).json()
      assert.equal(s.leverage, 1)
      assert.deepEqual(s.params, { fast: 10, slow: 30, allow_short: false })
    })

    it('validates template_id, params and the symbol count against the template, creating nothing', async () => {
      const cases: [Record<string, unknown>, string, RegExp][] = [
        [{ ...base, template_id: 'no_such_template' }, 'template_id', /unknown template_id "no_such_template"/],
        [{ ...base, params: { fast: 1, slow: 30 } }, 'params.fast', /params\.fast must be an integer between 2 and 999/],
        [{ ...base, params: { fast: 10.5 } }, 'params.fast', /integer/],
        [{ ...base, params: { fast: '10' } }, 'params.fast', /integer/],
        [{ ...base, params: { fast: 30, slow: 10 } }, 'params.fast', /less than params\.slow/],
        [{ ...base, params: { fats: 10 } }, 'params.fats', /not a parameter of sma_cross/],
        [{ ...base, params: { allow_short: 'yes' } }, 'params.allow_short', /true or false/],
        [{ ...base, symbols: ['BTCUSDT', 'ETHUSDT'] }, 'symbols', /exactly 1/],
        [{ ...base, template_id: 'cross_sectional_momentum', params: {} }, 'symbols', /at least 2/],
      ]
      const before = (await t.signed(key, 'GET', '/v1/strategies?limit=100')).json().data.length
      for (const [body, field, message] of cases) {
        const res = await t.signed(key, 'POST', '/v1/strategies', body)
        assert.equal(res.statusCode, 400, `${field}: ${res.body}`)
        assert.equal(res.json().error.code, 'INVALID_PARAMETER')
        assert.equal(res.json().error.field, field, res.body)
        assert.match(res.json().error.message, message)
      }
      assert.equal((await t.signed(key, 'GET', '/v1/strategies?limit=100')).json().data.length, before)
      const multi = await t.signed(key, 'POST', '/v1/strategies', {
        ...base,
        template_id: 'cross_sectional_momentum',
        params: { lookback: 30 },
        symbols: ['BTCUSDT', 'ETHUSDT', 'XRPUSDT'],
        timeframe: '1d',
      })
      assert.equal(multi.statusCode, 200, multi.body)
      assert.deepEqual(multi.json().params, { lookback: 30, rebalance_every: 5, long_count: 1, short_count: 0 })
    })

    it('PATCH validates params against the resulting template and keeps the record on refusal', async () => {
      const created = (await t.signed(key, 'POST', '/v1/strategies', base)).json()
      const bad = await t.signed(key, 'PATCH', `/v1/strategies/${created.id}`, { params: { fast: 40, slow: 30 } })
      assert.equal(bad.statusCode, 400, bad.body)
      assert.equal(bad.json().error.field, 'params.fast')
      const unknown = await t.signed(key, 'PATCH', `/v1/strategies/${created.id}`, { template_id: 'nope' })
      assert.equal(unknown.json().error.field, 'template_id')
      // The stored {fast, slow, allow_short} are valid ema_cross params too; ema_cross keeps them.
      const switched = await t.signed(key, 'PATCH', `/v1/strategies/${created.id}`, { template_id: 'ema_cross' })
      assert.equal(switched.statusCode, 200, switched.body)
      assert.deepEqual(switched.json().params, { fast: 10, slow: 30, allow_short: false })
      const toRsi = await t.signed(key, 'PATCH', `/v1/strategies/${created.id}`, { template_id: 'rsi_reversion' })
      assert.equal(toRsi.statusCode, 400, toRsi.body)
      assert.equal(toRsi.json().error.field, 'params.fast')
      const withParams = await t.signed(key, 'PATCH', `/v1/strategies/${created.id}`, { template_id: 'rsi_reversion', params: { period: 7 } })
      assert.equal(withParams.statusCode, 200, withParams.body)
      assert.deepEqual(withParams.json().params, { period: 7, oversold: 30, overbought: 70, exit: 50, allow_short: false })
      const symbols = await t.signed(key, 'PATCH', `/v1/strategies/${created.id}`, { symbols: ['BTCUSDT', 'ETHUSDT'] })
      assert.equal(symbols.json().error.field, 'symbols')
      const read = (await t.signed(key, 'GET', `/v1/strategies/${created.id}`)).json()
      assert.equal(read.template_id, 'rsi_reversion')
      assert.deepEqual(read.symbols, ['BTCUSDT'])
    })

    it('refuses invalid fields with 400 INVALID_PARAMETER naming the field, creating nothing', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ ...base, leverage: 21 }, 'leverage'],
        [{ ...base, leverage: 0 }, 'leverage'],
        [{ ...base, capital: '0' }, 'capital'],
        [{ ...base, capital: '-5' }, 'capital'],
        [{ ...base, capital: 1000 }, 'capital'],
        [{ ...base, capital: 'abc' }, 'capital'],
        [{ ...base, symbols: ['btcusdt'] }, 'symbols.0'],
        [{ ...base, symbols: [] }, 'symbols'],
        [{ ...base, timeframe: '2m' }, 'timeframe'],
        [{ ...base, name: '' }, 'name'],
        [{ ...base, extra: 1 }, 'extra'],
      ]
      const before = (await t.signed(key, 'GET', '/v1/strategies?limit=100')).json().data.length
      for (const [body, field] of cases) {
        const res = await t.signed(key, 'POST', '/v1/strategies', body)
        assert.equal(res.statusCode, 400, `${field}: ${res.body}`)
        assert.equal(res.json().error.code, 'INVALID_PARAMETER')
        assert.equal(res.json().error.field, field, res.body)
      }
      assert.equal((await t.signed(key, 'GET', '/v1/strategies?limit=100')).json().data.length, before)
    })

    it('pages newest first with an opaque cursor and rejects a forged one', async () => {
      const own = await t.createKey(['strategies:read', 'strategies:write'])
      const ids: string[] = []
      for (let i = 0; i < 5; i++) {
        t.clock.advance(1000)
        ids.push((await t.signed(own, 'POST', '/v1/strategies', { ...base, name: `s${i}` })).json().id)
      }
      const seen: string[] = []
      let cursor: string | null = null
      do {
        const url: string = `/v1/strategies?limit=2${cursor ? `&cursor=${cursor}` : ''}`
        const page = (await t.signed(own, 'GET', url)).json()
        assert.ok(page.data.length <= 2)
        seen.push(...page.data.map((s: { id: string }) => s.id))
        cursor = page.next_cursor
      } while (cursor)
      assert.deepEqual(seen, [...ids].reverse())
      for (const bad of ['!!!', 'bm90LWpzb24', Buffer.from('["x",1]').toString('base64url')]) {
        const res = await t.signed(own, 'GET', `/v1/strategies?cursor=${bad}`)
        assert.equal(res.statusCode, 400)
        assert.equal(res.json().error.field, 'cursor')
      }
      for (const limit of [0, 101]) assert.equal((await t.signed(own, 'GET', `/v1/strategies?limit=${limit}`)).statusCode, 400)
    })

    it('filters the list by status', async () => {
      const own = await t.createKey(['strategies:read', 'strategies:write'])
      const id = (await t.signed(own, 'POST', '/v1/strategies', base)).json().id
      await t.database.handle.db.updateTable('strategies').set({ status: 'paused' }).where('id', '=', id).execute()
      await t.signed(own, 'POST', '/v1/strategies', base)
      const paused = (await t.signed(own, 'GET', '/v1/strategies?status=paused')).json().data
      assert.deepEqual(paused.map((s: { id: string }) => s.id), [id])
      assert.equal((await t.signed(own, 'GET', '/v1/strategies?status=gone')).statusCode, 400)
    })

    it('PATCH changes the given fields and updated_at; refuses an empty patch', async () => {
      const created = (await t.signed(key, 'POST', '/v1/strategies', base)).json()
      t.clock.advance(5000)
      const res = await t.signed(key, 'PATCH', `/v1/strategies/${created.id}`, { leverage: 5, params: { fast: 5, slow: 20 } })
      assert.equal(res.statusCode, 200, res.body)
      const s = res.json()
      assert.equal(s.leverage, 5)
      assert.deepEqual(s.params, { fast: 5, slow: 20, allow_short: false })
      assert.equal(s.name, base.name)
      assert.equal(s.created_at, created.created_at)
      assert.equal(s.updated_at, new Date(t.clock.now()).toISOString())
      assert.equal((await t.signed(key, 'PATCH', `/v1/strategies/${created.id}`, {})).statusCode, 400)
    })

    it('refuses PATCH and DELETE while deployed with 409 INVALID_STATE, changing nothing', async () => {
      const created = (await t.signed(key, 'POST', '/v1/strategies', base)).json()
      await t.database.handle.db.updateTable('strategies').set({ status: 'deployed' }).where('id', '=', created.id).execute()
      const patch = await t.signed(key, 'PATCH', `/v1/strategies/${created.id}`, { name: 'changed' })
      assert.equal(patch.statusCode, 409)
      assert.equal(patch.json().error.code, 'INVALID_STATE')
      const del = await t.signed(key, 'DELETE', `/v1/strategies/${created.id}`)
      assert.equal(del.statusCode, 409)
      const after = (await t.signed(key, 'GET', `/v1/strategies/${created.id}`)).json()
      assert.equal(after.name, base.name)
      assert.equal(after.status, 'deployed')
    })

    it('DELETE answers 204, then the strategy is gone from reads and lists', async () => {
      const created = (await t.signed(key, 'POST', '/v1/strategies', base)).json()
      const del = await t.signed(key, 'DELETE', `/v1/strategies/${created.id}`)
      assert.equal(del.statusCode, 204)
      assert.equal((await t.signed(key, 'GET', `/v1/strategies/${created.id}`)).statusCode, 404)
      assert.equal((await t.signed(key, 'DELETE', `/v1/strategies/${created.id}`)).statusCode, 404)
      const list = (await t.signed(key, 'GET', '/v1/strategies?limit=100')).json().data
      assert.ok(!list.some((s: { id: string }) => s.id === created.id))
    })

    it('keeps protective exits: shown resolved (trigger spelled out) in create, GET and list answers; null without', async () => {
      const plain = (await t.signed(key, 'POST', '/v1/strategies', base)).json()
      assert.equal(plain.exits, null)
      const exits = { stop_loss: '0.02', take_profit: '0.05', trailing_stop: '0.01', trailing_activation: '0.015' }
      const created = await t.signed(key, 'POST', '/v1/strategies', { ...base, exits })
      assert.equal(created.statusCode, 200, created.body)
      assert.deepEqual(created.json().exits, { ...exits, trigger: 'last' })
      const read = await t.signed(key, 'GET', `/v1/strategies/${created.json().id}`)
      assert.deepEqual(read.json(), created.json())
      const listed = (await t.signed(key, 'GET', '/v1/strategies?limit=100')).json().data
      assert.deepEqual(listed.find((s: { id: string }) => s.id === created.json().id).exits, { ...exits, trigger: 'last' })
      assert.equal(listed.find((s: { id: string }) => s.id === plain.id).exits, null)
      const row = await t.database.handle.db.selectFrom('strategies').select('exits').where('id', '=', created.json().id).executeTakeFirstOrThrow()
      assert.deepEqual(row.exits, exits, 'stored as written')
      const mark = (await t.signed(key, 'POST', '/v1/strategies', { ...base, exits: { stop_loss: '0.5', trigger: 'mark' } })).json()
      assert.deepEqual(mark.exits, { stop_loss: '0.5', trigger: 'mark' })
    })

    it('refuses exits out of bounds on create and PATCH with 400 INVALID_PARAMETER naming exits.<field>, changing nothing', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'exits'],
        [{ trigger: 'mark' }, 'exits'],
        [{ stop_loss: '0' }, 'exits.stop_loss'],
        [{ stop_loss: '0.995' }, 'exits.stop_loss'],
        [{ stop_loss: '1e-2' }, 'exits.stop_loss'],
        [{ take_profit: '100.5' }, 'exits.take_profit'],
        [{ take_profit: '-1' }, 'exits.take_profit'],
        [{ trailing_stop: '0.0009' }, 'exits.trailing_stop'],
        [{ trailing_stop: '0.2001' }, 'exits.trailing_stop'],
        [{ trailing_stop: '0.01', trailing_activation: '0' }, 'exits.trailing_activation'],
        [{ trailing_stop: '0.01', trailing_activation: '101' }, 'exits.trailing_activation'],
        [{ stop_loss: '0.02', trailing_activation: '0.01' }, 'exits.trailing_activation'],
        [{ stop_loss: 0.02 }, 'exits.stop_loss'],
        [{ stop_loss: '0.02', trigger: 'index' }, 'exits.trigger'],
        [{ stop_loss: '0.02', stop: '0.1' }, 'exits.stop'],
      ]
      const kept = (await t.signed(key, 'POST', '/v1/strategies', { ...base, exits: { stop_loss: '0.03' } })).json()
      const before = (await t.signed(key, 'GET', '/v1/strategies?limit=100')).json().data.length
      for (const [exits, field] of cases) {
        for (const [method, url] of [['POST', '/v1/strategies'], ['PATCH', `/v1/strategies/${kept.id}`]] as const) {
          const res = await t.signed(key, method, url, method === 'POST' ? { ...base, exits } : { name: 'changed', exits })
          assert.equal(res.statusCode, 400, `${method} ${JSON.stringify(exits)}: ${res.body}`)
          assert.equal(res.json().error.code, 'INVALID_PARAMETER')
          assert.equal(res.json().error.field, field, `${method} ${JSON.stringify(exits)}: ${res.body}`)
        }
      }
      assert.equal((await t.signed(key, 'GET', '/v1/strategies?limit=100')).json().data.length, before)
      assert.deepEqual((await t.signed(key, 'GET', `/v1/strategies/${kept.id}`)).json(), kept)
    })

    it('PATCH replaces exits as a whole and null removes them; another user cannot touch them', async () => {
      const created = (await t.signed(key, 'POST', '/v1/strategies', { ...base, exits: { stop_loss: '0.03', take_profit: '0.06' } })).json()
      const replaced = await t.signed(key, 'PATCH', `/v1/strategies/${created.id}`, { exits: { trailing_stop: '0.02', trigger: 'mark' } })
      assert.equal(replaced.statusCode, 200, replaced.body)
      assert.deepEqual(replaced.json().exits, { trailing_stop: '0.02', trigger: 'mark' })
      const other = await t.createKey(['strategies:read', 'strategies:write'])
      const foreign = await t.signed(other, 'PATCH', `/v1/strategies/${created.id}`, { exits: null })
      assert.equal(foreign.statusCode, 404, "another user's strategy is not found")
      assert.equal((await t.signed(other, 'GET', `/v1/strategies/${created.id}`)).statusCode, 404)
      const renamed = await t.signed(key, 'PATCH', `/v1/strategies/${created.id}`, { name: 'renamed' })
      assert.deepEqual(renamed.json().exits, { trailing_stop: '0.02', trigger: 'mark' }, 'a patch without exits keeps them')
      const cleared = await t.signed(key, 'PATCH', `/v1/strategies/${created.id}`, { exits: null })
      assert.equal(cleared.statusCode, 200, cleared.body)
      assert.equal(cleared.json().exits, null)
      assert.equal((await t.signed(key, 'GET', `/v1/strategies/${created.id}`)).json().exits, null)
      const row = await t.database.handle.db.selectFrom('strategies').select('exits').where('id', '=', created.id).executeTakeFirstOrThrow()
      assert.equal(row.exits, null)
    })

    it('answers 404 for an id of the wrong form', async () => {
      assert.equal((await t.signed(key, 'GET', '/v1/strategies/strat_zzzz')).statusCode, 404)
      assert.equal((await t.signed(key, 'GET', '/v1/strategies/1')).statusCode, 404)
    })
  })
}
