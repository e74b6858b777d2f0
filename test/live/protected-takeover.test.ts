import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { clientAlgoIdPrefix, protectiveKindOf } from '../../src/live/protection/client-algo-ids.js'
import type { StrategyPosition } from '../../src/live/schemas.js'
import { killChildren } from '../cli/cli-process.js'
import { poll } from '../support/poll.js'
import { assertNoIdTwice, exchangeBook } from './exchange-books.js'
import { account, hex, LIVE_PARAMS } from './live-accounts.js'
import { startPerpetuaNodes } from './perpetua-nodes.js'

/**
 * The takeover test (issue 31): two nodes on PostgreSQL; the node holding a protected live run is SIGKILLed
 * while it moves the run's levels (the position reversed: its stop, target and trailing stop move to the new
 * entry, cancel-then-place), with the first new order on its way to the exchange (held there 8 s, then
 * executed, as Binance executes what it received). The other node takes the run over: afterwards exactly one
 * protective order of each kind rests, each at the run's levels, and no clientAlgoId went out twice.
 */
const REPLAY = { speed: 120, replayStart: Date.UTC(2025, 5, 2, 12, 30, 0) }
const EXITS = { stop_loss: '0.01', take_profit: '0.02', trailing_stop: '0.015', trailing_activation: '0.005' }
const TRADER = account('MOVING')

// todo until live-protect places a kind again while its earlier intent stays unknown: today a placement that
// never reached the exchange (the killed node's in-flight POST) blocks its kind for NOT_FOUND_GIVE_UP_MS (10
// minutes), so the position has no stop meanwhile; a close-all order cannot be doubled (-4130 refuses a second).
const TODO = 'live-protect: an unknown stop placement blocks the stop for 10 minutes after a takeover'

describe('a protected live run whose node dies mid-move of its levels (postgres, two nodes)', { skip: !process.env.TEST_DATABASE_URL }, () => {
  after(killChildren)

  it('is taken over by the other node, which leaves exactly one order of each kind at the run\'s levels', async () => {
    const nodes = await startPerpetuaNodes('postgres', { replay: { ...REPLAY, accounts: [{ ...TRADER, balances: { USDT: '10000' } }] }, count: 2 })
    try {
      await nodes.start()
      const key = await nodes.call('POST', '/v1/exchange-keys', { api_key: TRADER.apiKey, api_secret: TRADER.secretKey, label: 'moving' })
      assert.equal(key.status, 200, key.text)
      const created = await nodes.call('POST', '/v1/strategies', { name: 'moving', template_id: 'sma_cross', params: LIVE_PARAMS, symbols: ['BTCUSDT'], timeframe: '1m', capital: '1000', leverage: 2, exits: EXITS })
      assert.equal(created.status, 200, created.text)
      const id = created.json.id as string
      assert.equal((await nodes.call('POST', `/v1/strategies/${id}/deploy`, { dry_run: false, exchange_key_id: key.json.id })).status, 200)
      const db = nodes.db!
      const leaseOwner = async () => (await db.selectFrom('strategy_runs').select('lease_owner').where('strategy_id', '=', id).executeTakeFirstOrThrow()).lease_owner

      // Once the first three orders rest, the next placement (the position reversed or changed: the levels move)
      // reaches the exchange 8 s after it was sent; the node holding the run dies while it waits.
      await poll('the first position guarded', 90_000, async () => ((await nodes.exchange(TRADER).algo.open('BTCUSDT')).kind === 'ok' && (await position(nodes, id))?.protective_orders?.length === 3 ? true : undefined), 250)
      const faults = nodes.replay.faults
      faults.add({ path: new RegExp(`^/fapi/v1/algoOrder\\?.*clientAlgoId=pa-${hex(id)}-[str]([4-9]|[1-9]\\d+)(&|$)`), latencyMs: 8_000, times: 1, account: TRADER.apiKey })
      await poll('a move of the levels in flight', 120_000, () => (faults.active().length === 0 ? true : undefined))
      const owner = (await leaseOwner())!
      const holder = nodes.running().find((n) => owner.startsWith(`${n.child.pid}-`))
      assert.ok(holder, `the run's lease owner ${owner} is one of the nodes`)
      await nodes.kill(holder)
      const killedAt = Date.now()

      await poll('the other node to take the run over', 40_000, async () => ((await leaseOwner()) !== owner ? true : undefined), 250)
      // Taken over, reconciled, and nothing of the run's waiting on the exchange: one order of each kind rests.
      let last = ''
      const settled = await poll(
        'one protective order of each kind resting at the run\'s levels',
        40_000,
        async () => {
          const p = await position(nodes, id)
          const book = await exchangeBook(nodes, TRADER)
          const resting = book.algoOrders.filter((o) => o.algoStatus === 'NEW')
          const held = p === undefined ? 0 : Number(p.qty) * (p.side === 'buy' ? 1 : -1)
          const rows = await db.selectFrom('protective_orders').select(['client_algo_id', 'status', 'trigger_price', 'last_error']).where('strategy_id', '=', id).execute()
          last = JSON.stringify({ owner: await leaseOwner(), exchange: book.position, position: p, algo: book.algoOrders.map((o) => [o.clientAlgoId, o.algoStatus, o.triggerPrice]), rows })
          if (held !== book.position || held === 0 || resting.length !== 3) return undefined
          if (!p!.protective_orders || p!.protective_orders.some((o) => (o.kind === 'trailing_stop' ? !trailingAsked(p!, o) : o.trigger_price !== levelOf(p!, o.kind)))) return undefined
          return { p: p!, book, resting }
        },
        1000,
      ).catch((error: Error) => {
        throw new Error(`${error.message}; last seen ${last}`)
      })
      const { p, book, resting } = settled
      assert.deepEqual(resting.map((o) => protectiveKindOf(clientAlgoIdPrefix(id), o.clientAlgoId)).sort(), ['stop_loss', 'take_profit', 'trailing_stop'])
      const of = (kind: string) => p.protective_orders!.find((o) => o.kind === kind)!
      assert.equal(of('stop_loss').trigger_price, p.stop_price)
      assert.equal(of('take_profit').trigger_price, p.take_profit_price)
      const trailing = of('trailing_stop')
      assert.equal(trailing.quantity, p.qty)
      assert.equal(Number(trailing.callback_rate), Number(EXITS.trailing_stop) * 100)
      if (p.trailing?.activation_price && p.trailing.stop_price === null) assert.equal(trailing.activate_price, p.trailing.activation_price)
      assert.ok(trailingAsked(p, trailing))
      assertNoIdTwice('moving', book)
      // Every intent row is settled (none left unknown), and each that rests is the exchange's.
      const rows = await db.selectFrom('protective_orders').selectAll().where('strategy_id', '=', id).execute()
      const open = rows.filter((r) => r.status === 'open').map((r) => r.client_algo_id).sort()
      assert.deepEqual(open, resting.map((o) => o.clientAlgoId).sort(), `the run's open rows are what rests: ${JSON.stringify(rows.map((r) => [r.client_algo_id, r.status]))}`)
      process.stdout.write(`# protected takeover: one order of each kind resting at the run's levels ${Date.now() - killedAt} ms after the kill (${rows.length} protective intents, ${book.algoOrders.length} algo orders sent)\n`)
    } finally {
      await nodes.close()
    }
  })
})

async function position(nodes: Awaited<ReturnType<typeof startPerpetuaNodes>>, id: string): Promise<StrategyPosition | undefined> {
  const res = await nodes.call('GET', `/v1/strategies/${id}/positions`)
  assert.equal(res.status, 200, res.text)
  return (res.json as StrategyPosition[])[0]
}

/** The run's level of a kind (the positions answer's, from its ledger). */
function levelOf(p: StrategyPosition, kind: string): string | null {
  return kind === 'stop_loss' ? p.stop_price : kind === 'take_profit' ? p.take_profit_price : null
}

/**
 * Whether a resting trailing stop is the one the run's position asks for: its quantity, and its activation price
 * while trailing has not started. The run keeps trading, so the poll waits for a moment when every kind agrees
 * (a move is stop, take profit, then trailing stop: between them, the trailing one is still the old position's).
 */
function trailingAsked(p: StrategyPosition, o: NonNullable<StrategyPosition['protective_orders']>[number]): boolean {
  if (o.quantity !== p.qty) return false
  return !(p.trailing?.activation_price && p.trailing.stop_price === null) || o.activate_price === p.trailing.activation_price
}
