import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { insertRun } from '../../src/live/queries.js'
import { RunnerPool } from '../../src/live/runner/runner-pool.js'
import type { StreamMessage } from '../../src/live/stream/status-messages.js'
import { type SignedInUser, signIn } from '../auth/bearer.js'
import { deployFastDryRun } from '../live/backtest-parity.js'
import { account, liveHarness } from '../live/live-accounts.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'

// 1m bars close five times a wall second from 2025-06-17 06:00 UTC (inside the recorded minutes).
const LIVE = account('SEE')
const REPLAY = { speed: 300, replayStart: Date.UTC(2025, 5, 17, 6, 0, 0), accounts: [{ ...LIVE, balances: { USDT: '10000' } }] }
const base = { name: 'trend', template_id: 'sma_cross', params: { fast: 10, slow: 30 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' }
/** A decimal as Perpetua prints it: no exponent, no trailing zeros, no float noise past `places`. */
const decimal = (places: number) => new RegExp(`^-?\\d+(\\.\\d{0,${places - 1}}[1-9])?$`)

interface SavedRun {
  broker: { lastOpenTime: number | null; lastClose: number; ledger: { arrays: Record<string, number[]> } }
}

for (const backend of backends()) {
  describe(`what a trader sees of a strategy's run, and inputs refused up front (${backend})`, () => {
    let t: TestApp
    let pool: RunnerPool
    let key: KeyPair
    let other: KeyPair
    let user: SignedInUser
    const db = () => t.database.handle.db
    const create = async (fields: Record<string, unknown> = {}, k: KeyPair = key) => {
      const res = await t.signed(k, 'POST', '/v1/strategies', { ...base, ...fields })
      assert.equal(res.statusCode, 200, res.body)
      return res.json() as { id: string } & Record<string, unknown>
    }
    const get = async (id: string, k: KeyPair = key) => (await t.signed(k, 'GET', `/v1/strategies/${id}`)).json()
    const listed = async (id: string, k: KeyPair = key) => (await t.signed(k, 'GET', '/v1/strategies?limit=100')).json().data.find((s: { id: string }) => s.id === id)
    const count = async () => (await db().selectFrom('strategies').select('id').execute()).length

    before(async () => {
      t = await startTestApp(backend, {}, { replay: REPLAY })
      // Short leases: a run whose start fails is claimed again within ~1.5 s (three failures well inside a poll).
      pool = new RunnerPool({
        db: db(),
        market: t.services.market,
        wsUrl: t.replay!.wsUrl,
        log: pino({ level: 'silent' }),
        signals: t.services.runSignals,
        secrets: t.services.secrets,
        ttlMs: 1_500,
        renewMs: 250,
      })
      pool.start()
      key = await t.createKey(['strategies:read', 'strategies:write'])
      other = await t.createKey(['strategies:read', 'strategies:write'])
      user = await signIn(t)
    })
    after(async () => {
      await pool.stop()
      await t.close()
    })

    it('a draft shows no run: last_error, mode, exchange_key and last_bar_at are null in GET and the list', async () => {
      const s = await create()
      for (const record of [s, await get(s.id), await listed(s.id)]) {
        assert.equal(record.last_error, null)
        assert.equal(record.mode, null)
        assert.equal(record.exchange_key, null)
        assert.equal(record.last_bar_at, null)
      }
    })

    it('refuses a symbol the exchange does not list, or lists as not trading, at create, PATCH and deploy, naming it and changing nothing', async () => {
      const before = await count()
      for (const [symbols, message] of [
        [['BTCUSD'], /the exchange lists no symbol BTCUSD/],
        [['EOSUSDT'], /EOSUSDT is not trading on the exchange \(status halt\)/],
      ] as const) {
        const res = await t.signed(key, 'POST', '/v1/strategies', { ...base, symbols })
        assert.equal(res.statusCode, 400, res.body)
        assert.equal(res.json().error.code, 'INVALID_PARAMETER')
        assert.equal(res.json().error.field, 'symbols')
        assert.match(res.json().error.message, message)
      }
      assert.equal(await count(), before)
      const s = await create()
      const patch = await t.signed(key, 'PATCH', `/v1/strategies/${s.id}`, { symbols: ['BTCUSD'] })
      assert.equal(patch.statusCode, 400, patch.body)
      assert.match(patch.json().error.message, /BTCUSD/)
      assert.deepEqual((await get(s.id)).symbols, ['BTCUSDT'])
      // A symbol delisted after the strategy was written: deploy refuses it, no run starts.
      await db().updateTable('strategies').set({ symbols: ['BTCUSD'] }).where('id', '=', s.id).execute()
      t.services.strategyCache?.invalidate(`${(await db().selectFrom('strategies').select('user_id').where('id', '=', s.id).executeTakeFirstOrThrow()).user_id}/${s.id}`)
      const deploy = await t.signed(key, 'POST', `/v1/strategies/${s.id}/deploy`, { dry_run: true })
      assert.equal(deploy.statusCode, 400, deploy.body)
      assert.equal(deploy.json().error.field, 'symbols')
      assert.match(deploy.json().error.message, /the exchange lists no symbol BTCUSD/)
      assert.equal((await db().selectFrom('strategy_runs').select('run').where('strategy_id', '=', s.id).execute()).length, 0)
      assert.equal((await get(s.id)).status, 'draft')
    })

    it("refuses capital below the template's minimum at create and PATCH, not only at deploy", async () => {
      const before = await count()
      const res = await t.signed(key, 'POST', '/v1/strategies', { ...base, capital: '199.99' })
      assert.equal(res.statusCode, 400, res.body)
      assert.equal(res.json().error.field, 'capital')
      assert.match(res.json().error.message, /template sma_cross needs a capital of at least 200/)
      assert.equal(await count(), before)
      const s = await create({ capital: '200' })
      const patch = await t.signed(key, 'PATCH', `/v1/strategies/${s.id}`, { capital: '150' })
      assert.equal(patch.statusCode, 400, patch.body)
      assert.equal(patch.json().error.field, 'capital')
      assert.equal((await get(s.id)).capital, '200')
      // A template with a higher minimum, the capital left alone: checked against the template the strategy ends up with.
      const multi = await t.signed(key, 'PATCH', `/v1/strategies/${s.id}`, { template_id: 'cross_sectional_momentum', params: {}, symbols: ['BTCUSDT', 'ETHUSDT'], timeframe: '1d' })
      assert.equal(multi.statusCode, 400, multi.body)
      assert.match(multi.json().error.message, /cross_sectional_momentum needs a capital of at least/)
      assert.equal((await t.signed(key, 'PATCH', `/v1/strategies/${s.id}`, { capital: '250' })).statusCode, 200)
    })

    it("refuses leverage above the symbol's maximum at its notional at deploy (400 before the 402 funds check)", async () => {
      const s = await create({ capital: '6000000' })
      // BTCUSDT's own tiers (the 2024-10-24 snapshot): 6,000,000 × 20 = 120,000,000 USDT falls in 100M–230M, which allows 10x.
      const high = await t.signed(key, 'POST', `/v1/strategies/${s.id}/deploy`, { dry_run: true, leverage: 20 })
      assert.equal(high.statusCode, 400, high.body)
      assert.equal(high.json().error.field, 'leverage')
      assert.match(high.json().error.message, /leverage 20 exceeds BTCUSDT's maximum of 10x at a notional of 120000000 USDT/)
      // 6,000,000 × 10 = 60,000,000: the 12M–70M tier allows 25x, so the leverage passes and the wallet decides.
      const fits = await t.signed(key, 'POST', `/v1/strategies/${s.id}/deploy`, { dry_run: true, leverage: 10 })
      assert.equal(fits.statusCode, 402, fits.body)
      assert.equal((await get(s.id)).status, 'draft')
    })

    it('positions: [] before any run; 404 for another user and an unknown id; 403 without strategies:read', async () => {
      const s = await create()
      const res = await t.signed(key, 'GET', `/v1/strategies/${s.id}/positions`)
      assert.equal(res.statusCode, 200, res.body)
      assert.deepEqual(res.json(), [])
      assert.equal((await t.signed(other, 'GET', `/v1/strategies/${s.id}/positions`)).statusCode, 404)
      assert.equal((await t.signed(key, 'GET', '/v1/strategies/strat_00000000/positions')).statusCode, 404)
      assert.equal((await t.signed(key, 'GET', '/v1/strategies/nonsense/positions')).statusCode, 404)
      const market = await t.createKey(['market:read'])
      const forbidden = await t.signed(market, 'GET', `/v1/strategies/${s.id}/positions`)
      assert.equal(forbidden.statusCode, 403, forbidden.body)
      const unsigned = await t.app.inject({ method: 'GET', url: `/v1/strategies/${s.id}/positions` })
      assert.equal(unsigned.statusCode, 401)
    })

    it("a dry run shows mode dry_run and last_bar_at; its positions are the ledger's, in exact decimals; flat after a pause with close_positions", async () => {
      const id = await deployFastDryRun(t, key)
      const deployed = await get(id)
      assert.equal(deployed.mode, 'dry_run')
      assert.equal(deployed.exchange_key, null)
      assert.equal((await listed(id)).mode, 'dry_run')
      // Read between two equal reads of the run's state, so the runner cannot move between them.
      const picture = await poll('an open position read while the run is quiet', 90_000, async () => {
        const state = async () =>
          (await db().selectFrom('strategy_runs').select('state').where('strategy_id', '=', id).orderBy('run', 'desc').executeTakeFirst())?.state as SavedRun | null | undefined
        const first = await state()
        const positions = (await t.signed(key, 'GET', `/v1/strategies/${id}/positions`)).json()
        const record = await get(id)
        const second = await state()
        if (!first || JSON.stringify(first) !== JSON.stringify(second) || positions.length === 0) return undefined
        return { state: second!, positions, record }
      })
      const { broker } = picture.state
      const at = (k: string) => broker.ledger.arrays[k]![0]!
      assert.equal(picture.positions.length, 1)
      const p = picture.positions[0]
      assert.deepEqual(Object.keys(p).sort(), ['entry_price', 'liquidation_price', 'mark_price', 'mode', 'opened_at', 'protective_orders', 'protective_orders_error', 'qty', 'side', 'stop_price', 'symbol', 'take_profit_price', 'trailing', 'trigger', 'unrealized_pnl'])
      assert.deepEqual([p.stop_price, p.take_profit_price, p.trailing, p.trigger], [null, null, null, null], 'a run without exits: only its liquidation price protects it')
      assert.deepEqual([p.protective_orders, p.protective_orders_error], [null, null], "a dry run's levels are simulated: nothing of it rests on the exchange")
      assert.equal(p.symbol, 'BTCUSDT')
      assert.equal(p.mode, 'dry_run')
      assert.equal(p.side, at('qty') > 0 ? 'buy' : 'sell')
      // BTCUSDT: step 0.001, tick 0.1; money at most 8 decimals.
      assert.match(p.qty, decimal(3))
      assert.equal(Number(p.qty), Math.abs(at('qty')))
      assert.match(p.mark_price, decimal(1))
      assert.equal(Number(p.mark_price), broker.lastClose)
      assert.match(p.entry_price, decimal(8))
      assert.ok(Math.abs(Number(p.entry_price) - at('entryPrice')) <= 5e-9, `${p.entry_price} vs ${at('entryPrice')}`)
      assert.match(p.unrealized_pnl, decimal(8))
      assert.ok(Math.abs(Number(p.unrealized_pnl) - at('qty') * (broker.lastClose - at('entryPrice'))) <= 5e-9)
      if (at('liq') > 0) {
        assert.match(p.liquidation_price, decimal(1))
        assert.equal(Number(p.liquidation_price), at('liq'))
      } else assert.equal(p.liquidation_price, null)
      assert.equal(p.opened_at, new Date(at('tripEntryTime')).toISOString())
      assert.equal(picture.record.last_bar_at, new Date(broker.lastOpenTime!).toISOString())
      assert.equal(picture.record.stats.open_positions, 1)

      const paused = await t.signed(key, 'POST', `/v1/strategies/${id}/pause`, { close_positions: true })
      assert.equal(paused.statusCode, 200, paused.body)
      assert.equal(paused.json().mode, 'dry_run', 'the last run keeps its mode')
      assert.deepEqual((await t.signed(key, 'GET', `/v1/strategies/${id}/positions`)).json(), [])
    })

    it('a live run shows mode live and its exchange key (id and label) in GET, the list and the stream status', async () => {
      const harness = liveHarness(() => t, () => user)
      const keyId = await harness.registerKey('main account', LIVE)
      const id = await harness.create('live one', 'ETHUSDT')
      const messages: StreamMessage[] = []
      const unsubscribe = await t.services.strategyFeed.subscribe(id, (m) => void messages.push(m))
      try {
        await harness.deploy(id, keyId)
        const record = (await harness.call('GET', `/v1/strategies/${id}`)).json()
        assert.equal(record.mode, 'live')
        assert.deepEqual(record.exchange_key, { id: keyId, label: 'main account' })
        const list = (await harness.call('GET', '/v1/strategies?limit=100')).json().data.find((s: { id: string }) => s.id === id)
        assert.equal(list.mode, 'live')
        assert.deepEqual(list.exchange_key, { id: keyId, label: 'main account' })
        const status = await poll('the deploy status message', 10_000, () => messages.find((m) => m.type === 'status' && m.data.status === 'deployed'))
        assert.equal(status.data.mode, 'live')
        assert.deepEqual(status.data.exchange_key, { id: keyId, label: 'main account' })
        const positions = await harness.call('GET', `/v1/strategies/${id}/positions`)
        assert.equal(positions.statusCode, 200, positions.body)
        for (const p of positions.json()) assert.equal(p.mode, 'live')
      } finally {
        unsubscribe()
        await harness.call('POST', `/v1/strategies/${id}/pause`, { close_positions: true })
      }
    })

    it('a run that cannot start three times in a row moves to error: last_error, strategy.error, a stream error; the edit back to draft keeps it, the next deploy clears it', async () => {
      const s = await create({ capital: '300', symbols: ['XRPUSDT'], timeframe: '1m' })
      const owner = await db().selectFrom('strategies').select('user_id').where('id', '=', s.id).executeTakeFirstOrThrow()
      const messages: StreamMessage[] = []
      const unsubscribe = await t.services.strategyFeed.subscribe(s.id, (m) => void messages.push(m))
      try {
        // A run on a symbol the exchange stopped listing after its deploy (the replay never listed BTCUSD).
        await db().transaction().execute(async (trx) => {
          await trx.updateTable('strategies').set({ status: 'deployed', symbols: ['BTCUSD'], deployed_at: new Date() }).where('id', '=', s.id).execute()
          await insertRun(trx, {
            strategy_id: s.id,
            run: 1,
            user_id: owner.user_id,
            template_id: 'sma_cross',
            template_version: null,
            seed: null,
            params: { fast: 10, slow: 30, allow_short: false },
            symbol: 'BTCUSD',
            timeframe: '1m',
            capital: '300',
            leverage: 1,
            dry_run: true,
            exchange_key_id: null,
            started_at: new Date(),
          })
        })
        t.services.strategyCache?.invalidate(`${owner.user_id}/${s.id}`)
        t.services.runSignals.emit('runs-changed')
        const failed = await poll('the strategy in error', 30_000, async () => {
          const record = await get(s.id)
          return record.status === 'error' ? record : undefined
        })
        assert.equal(failed.last_error.code, 'START_FAILED')
        assert.match(failed.last_error.message, /could not start 3 times in a row; the last time: the exchange lists no symbol BTCUSD/)
        assert.match(failed.last_error.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
        assert.deepEqual((await listed(s.id)).last_error, failed.last_error)
        const run = await db().selectFrom('strategy_runs').selectAll().where('strategy_id', '=', s.id).executeTakeFirstOrThrow()
        assert.equal(run.start_failures, 3)
        assert.ok(run.ended_at, 'the run ended')
        const events = await db().selectFrom('events').select(['type', 'data']).where('type', '=', 'strategy.error').execute()
        const event = events.map((e: { data: unknown }) => e.data as Record<string, unknown>).find((d) => d.strategy_id === s.id)
        assert.deepEqual(event, { strategy_id: s.id, code: 'START_FAILED', message: failed.last_error.message })
        const streamed = await poll('the stream error message', 10_000, () => messages.find((m) => m.type === 'error'))
        assert.equal(streamed.data.code, 'START_FAILED')

        // Decided (docs/decisions/live.md, "What a trader sees of a run"): the edit back to draft keeps the reason in view; the next deploy starts clean.
        const edited = await t.signed(key, 'PATCH', `/v1/strategies/${s.id}`, { symbols: ['XRPUSDT'] })
        assert.equal(edited.statusCode, 200, edited.body)
        assert.equal(edited.json().status, 'draft')
        assert.deepEqual(edited.json().last_error, failed.last_error)
        const redeployed = await t.signed(key, 'POST', `/v1/strategies/${s.id}/deploy`, { dry_run: true })
        assert.equal(redeployed.statusCode, 200, redeployed.body)
        assert.equal(redeployed.json().last_error, null)
        assert.equal(redeployed.json().mode, 'dry_run')
        await t.signed(key, 'POST', `/v1/strategies/${s.id}/pause`, {})
      } finally {
        unsubscribe()
      }
    })
  })
}
