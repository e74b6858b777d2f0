import assert from 'node:assert/strict'
import { after, describe, it } from 'node:test'
import { clientAlgoIdPrefix, protectiveKindOf } from '../../src/live/protection/client-algo-ids.js'
import type { StrategyOrder, StrategyPosition, StrategyTrade } from '../../src/live/schemas.js'
import { killChildren } from '../cli/cli-process.js'
import { backends } from '../support/database.js'
import { poll } from '../support/poll.js'
import { assertNoIdTwice, type ExchangeBook, exchangeBook, type ExchangeFill } from './exchange-books.js'
import { account, LIVE_PARAMS } from './live-accounts.js'
import { type PerpetuaNodes, startPerpetuaNodes } from './perpetua-nodes.js'

/**
 * The outage test (issue 31): live runs whose stop, target and trailing stop rest on the exchange; every
 * Perpetua process is SIGKILLed; the replay exchange moves the price through one level while nothing of
 * Perpetua runs and closes the position by itself; on restart each run finds the fill, books the close once
 * with its exit reason, its ledger equals the exchange's fills, no id went out twice, and it carries on (or
 * stays flat under the latch). One run per exit kind, each on its own account, all killed together: the
 * kind under test rests 0.15–0.2 % from the entry, the other two 3 % away.
 */
const SPEED = 120
// 2025-06-02 12:30 UTC: over the half hour when the runs take their first positions (some 15–60 replay minutes
// in, as the nodes start), BTC swings 0.15 % both ways within 50 minutes of any close and seldom within the
// next minute (scanned over the recorded minutes of June 2025): whichever side a run holds, its level is
// crossed during the outage and not before the kill.
const REPLAY_START = Date.UTC(2025, 5, 2, 12, 30, 0)
const MINUTE = 60_000
const NEAR = '0.0015'
// Binance's callbackRate is in steps of 0.1 %: 0.2 % is sent as it is (0.15 % would be floored to 0.1 %).
const NEAR_TRAIL = '0.002'
const FAR = '0.03'
type Kind = 'stop_loss' | 'take_profit' | 'trailing_stop'
const VARIANTS: { kind: Kind; exits: Record<string, string> }[] = [
  { kind: 'stop_loss', exits: { stop_loss: NEAR, take_profit: FAR, trailing_stop: FAR, trailing_activation: FAR } },
  { kind: 'take_profit', exits: { stop_loss: FAR, take_profit: NEAR, trailing_stop: FAR, trailing_activation: FAR } },
  { kind: 'trailing_stop', exits: { stop_loss: FAR, take_profit: FAR, trailing_stop: NEAR_TRAIL } },
]

for (const backend of backends()) {
  describe(`live positions stay protected while Perpetua is down (${backend}: ${backend === 'postgres' ? 'two nodes' : 'one node, DATA_DIR kept'})`, () => {
    after(killChildren)

    it('every process SIGKILLed, the exchange closes each position at its stop, target or trailing stop; on restart each run books that close once and carries on', async () => {
      const runs = VARIANTS.map((v) => ({ ...v, trader: account(`OUT${v.kind.slice(0, 4).toUpperCase()}`), id: '' }))
      const nodes = await startPerpetuaNodes(backend, { replay: { speed: SPEED, replayStart: REPLAY_START, accounts: runs.map((r) => ({ ...r.trader, balances: { USDT: '10000' } })) } })
      try {
        await nodes.start()
        for (const r of runs) {
          const key = await nodes.call('POST', '/v1/exchange-keys', { api_key: r.trader.apiKey, api_secret: r.trader.secretKey, label: r.kind })
          assert.equal(key.status, 200, key.text)
          const created = await nodes.call('POST', '/v1/strategies', { name: r.kind, template_id: 'sma_cross', params: LIVE_PARAMS, symbols: ['BTCUSDT'], timeframe: '1m', capital: '1000', leverage: 2, exits: r.exits })
          assert.equal(created.status, 200, created.text)
          r.id = created.json.id
          const deployed = await nodes.call('POST', `/v1/strategies/${r.id}/deploy`, { dry_run: false, exchange_key_id: key.json.id })
          assert.equal(deployed.status, 200, deployed.text)
        }

        // A moment when every run holds a position with its three orders resting, as its positions answer shows.
        const guarded = await poll('every run to hold a position its stop, target and trailing stop guard on the exchange', 90_000, async () => {
          const answers = await Promise.all(runs.map((r) => positionOf(nodes, r.id)))
          return answers.every((p) => p && (p.protective_orders ?? []).filter((o) => o.status === 'NEW' && o.kind !== 'other').length === 3) ? (answers as StrategyPosition[]) : undefined
          // Each positions answer reads the exchange with the nodes' own weight (some 6 a run): a second apart
          // leaves the runners most of their budget.
        }, 1000)
        await nodes.killAll()
        const killedAt = await nodes.exchangeNow()
        for (const [k, r] of runs.entries()) assertOrdersMatchLevels(r.kind, guarded[k]!, r.exits)

        // Nothing of Perpetua runs: the exchange alone closes each position, by the order of the kind under test.
        // Up to five replay hours: a loaded host kills later than the half hour the window was chosen for, and a
        // level 0.15 % away can then wait a few hours for its cross.
        await poll('the exchange to close every position by itself', 150_000, async () => ((await Promise.all(runs.map((r) => nodes.exchangeQty(r.trader)))).every((q) => q === 0) ? true : undefined), 1000).catch(async (error: Error) => {
          const books = await Promise.all(runs.map((r) => exchangeBook(nodes, r.trader)))
          const seen = books.map((b, k) => ({ kind: runs[k]!.kind, position: b.position, entry: guarded[k]!.entry_price, algo: b.algoOrders.map((o) => [o.clientAlgoId, o.algoStatus, o.triggerPrice, o.activatePrice]) }))
          throw new Error(`${error.message}; killed at ${new Date(killedAt).toISOString()}, now ${new Date(await nodes.exchangeNow()).toISOString()}: ${JSON.stringify(seen)}`)
        })
        const fired = await Promise.all(runs.map((r) => exchangeBook(nodes, r.trader)))
        const replayAtRestart = await nodes.exchangeNow()
        for (const [k, r] of runs.entries()) {
          const finished = fired[k]!.algoOrders.filter((o) => o.algoStatus === 'FINISHED')
          assert.deepEqual(
            finished.map((o) => protectiveKindOf(clientAlgoIdPrefix(r.id), o.clientAlgoId)),
            [r.kind],
            `${r.kind}: the exchange closed the position by the run's ${r.kind} order alone`,
          )
          assert.ok(Number(finished[0]!.triggerTime) >= killedAt, `${r.kind}: it triggered at ${finished[0]!.triggerTime}, after the kill at ${killedAt} (else this run proves nothing about the outage)`)
        }

        await nodes.start()
        const restartedAt = Date.now()
        const booked: number[] = []
        for (const r of runs) {
          await poll(`${r.kind}: the restarted run to book the exchange's close`, 60_000, async () => ((await trades(nodes, r.id)).some((t) => t.exit_reason === r.kind) ? true : undefined), 100)
          booked.push(Date.now() - restartedAt)
        }
        for (const [k, r] of runs.entries()) {
          // It acts on bars again, then the run and the exchange are compared at a quiet moment.
          await poll(`${r.kind}: the run to act on five more bars`, 60_000, async () => {
            const s = (await nodes.call('GET', `/v1/strategies/${r.id}`)).json as { status: string; last_bar_at: string | null; last_error: unknown }
            assert.equal(s.status, 'deployed', `${r.kind}: ${JSON.stringify(s.last_error)}`)
            return s.last_bar_at && Date.parse(s.last_bar_at) >= replayAtRestart + 5 * MINUTE ? true : undefined
          }, 200)
          const { book, orders: runOrders, trades: runTrades, position } = await quietPicture(nodes, r)
          assertNoIdTwice(r.kind, book)
          const protective = runTrades.filter((t) => t.exit_reason === 'stop_loss' || t.exit_reason === 'take_profit' || t.exit_reason === 'trailing_stop')
          // The close the exchange made during the outage: its triggered order's child, booked as one trade at its fill.
          const child = [...book.fills.values()].find((f) => f.clientOrderId === fired[k]!.algoOrders.find((o) => o.algoStatus === 'FINISHED')!.clientAlgoId)
          assert.ok(child, `${r.kind}: the triggered order's child filled`)
          const closes = runTrades.filter((t) => t.exit_reason === r.kind && Date.parse(t.exit_time) === child.time)
          assert.equal(closes.length, 1, `${r.kind}: the close booked once: ${JSON.stringify(protective)}`)
          assertLedgerIsFills(r.kind, r.id, book, runOrders, protective)
          const held = position === undefined ? 0 : Number(position.qty) * (position.side === 'buy' ? 1 : -1)
          assert.equal(held, book.position, `${r.kind}: the run holds what the exchange holds`)
          const resting = book.algoOrders.filter((o) => o.algoStatus === 'NEW')
          if (held === 0) {
            assert.deepEqual(resting, [], `${r.kind}: flat, nothing rests`)
          } else {
            assert.deepEqual(resting.map((o) => protectiveKindOf(clientAlgoIdPrefix(r.id), o.clientAlgoId)).sort(), ['stop_loss', 'take_profit', 'trailing_stop'], `${r.kind}: the new position is guarded again`)
            assertOrdersMatchLevels(r.kind, position!, r.exits)
          }
          process.stdout.write(
            `# outage (${backend}) ${r.kind}: triggered ${fired[k]!.algoOrders.find((o) => o.algoStatus === 'FINISHED')!.triggerTime! as number - killedAt} replay ms after the kill, booked ${booked[k]} ms after the restart, then ${held === 0 ? 'flat under the latch' : `in a new ${position!.side} position, guarded`}; ${protective.length} protective closes, ${book.fills.size} exchange orders filled\n`,
          )
        }
      } finally {
        await nodes.close()
      }
    })
  })
}

async function positionOf(nodes: PerpetuaNodes, id: string): Promise<StrategyPosition | undefined> {
  const res = await nodes.call('GET', `/v1/strategies/${id}/positions`)
  assert.equal(res.status, 200, res.text)
  return (res.json as StrategyPosition[])[0]
}

function trades(nodes: PerpetuaNodes, id: string): Promise<StrategyTrade[]> {
  return everyPage(nodes, `/v1/strategies/${id}/trades`)
}

function orders(nodes: PerpetuaNodes, id: string): Promise<StrategyOrder[]> {
  return everyPage(nodes, `/v1/strategies/${id}/orders`)
}

/** Every row of a listing, page after page (a run trading for an hour of replay has more than one page of orders). */
async function everyPage<T>(nodes: PerpetuaNodes, path: string): Promise<T[]> {
  const rows: T[] = []
  let cursor: string | null = null
  do {
    const res = await nodes.call('GET', `${path}?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)
    assert.equal(res.status, 200, res.text)
    rows.push(...(res.json.data as T[]))
    cursor = res.json.next_cursor as string | null
  } while (cursor)
  return rows
}

/** The exchange's book beside the run's orders, trades and position, read between two equal reads of the run's side: nothing moved meanwhile. */
function quietPicture(nodes: PerpetuaNodes, r: { id: string; kind: string; trader: Parameters<typeof exchangeBook>[1] }) {
  // The position's marks move with every bar: what it holds, not how it is marked, must stand still.
  const held = (p: StrategyPosition | undefined) => p && [p.side, p.qty, p.entry_price, p.stop_price, p.take_profit_price]
  let last = ''
  const picture = poll(`${r.kind}: a quiet moment to compare the exchange with the run`, 30_000, async () => {
    const before = JSON.stringify([await orders(nodes, r.id), await trades(nodes, r.id), held(await positionOf(nodes, r.id))])
    const book = await exchangeBook(nodes, r.trader)
    const [o, t, p] = [await orders(nodes, r.id), await trades(nodes, r.id), await positionOf(nodes, r.id)]
    const resting = book.algoOrders.filter((x) => x.algoStatus === 'NEW').map((x) => x.clientAlgoId)
    last = JSON.stringify({ exchange: book.position, position: held(p), pending: o.filter((x) => x.status === 'new').map((x) => x.client_order_id), resting, algo: book.algoOrders.slice(-6).map((x) => [x.clientAlgoId, x.algoStatus, x.triggerPrice, x.updateTime]), answer: p?.protective_orders?.map((x) => x.client_algo_id) })
    if (JSON.stringify([o, t, held(p)]) !== before || o.some((x) => x.status === 'new')) return undefined
    if ((p === undefined ? 0 : Number(p.qty) * (p.side === 'buy' ? 1 : -1)) !== book.position) return undefined
    // Its protection settled too: nothing rests for a flat run, one order of each kind for a position (a move
    // of the levels in progress is waited out; one that never completes times out here).
    if (resting.length !== (book.position === 0 ? 0 : 3) || (p?.protective_orders ?? []).length !== resting.length) return undefined
    return { book, orders: o, trades: t, position: p }
  }, 1000)
  return picture.catch((error: Error) => {
    throw new Error(`${error.message}; last seen ${last}`)
  })
}

/**
 * The run's ledger is the exchange's fills: each filled order of the run is one exchange order under the same
 * client id with its size and average price (its own sends pp-…, and each protective close under its triggered
 * order's child id pa-…, whose exit reason is the id's kind), each protective close is one trade of the run with
 * that kind, size and price, and nothing else filled on the account.
 */
function assertLedgerIsFills(what: string, id: string, book: ExchangeBook, runOrders: StrategyOrder[], protective: StrategyTrade[]): void {
  const prefix = clientAlgoIdPrefix(id)
  const fills = [...book.fills.values()]
  const filled = runOrders.filter((o) => o.status === 'filled' && Number(o.qty) > 0)
  assert.deepEqual(filled.map((o) => o.client_order_id).sort(), fills.map((f) => f.clientOrderId).sort(), `${what}: one exchange order per filled order of the run, and no other fill on the account`)
  const at = (price: string | null, f: ExchangeFill) => Math.abs(Number(price) - f.price) <= 0.1
  for (const f of fills) {
    const o = filled.find((x) => x.client_order_id === f.clientOrderId)!
    const kind = protectiveKindOf(prefix, f.clientOrderId) ?? null
    assert.deepEqual([Number(o.qty), o.side, o.exit_reason], [f.qty, f.side.toLowerCase(), kind], `${what}: ${f.clientOrderId}'s size, side and reason`)
    assert.ok(at(o.price, f), `${what}: ${f.clientOrderId} at ${o.price}, the exchange's fills at ${f.price}`)
    if (kind) assert.ok(protective.find((t) => t.exit_reason === kind && at(t.exit_price, f) && Number(t.qty) === f.qty), `${what}: ${f.clientOrderId} (${f.qty} at ${f.price}) is booked as a ${kind} trade: ${JSON.stringify(protective)}`)
  }
  assert.equal(protective.length, fills.filter((f) => f.clientOrderId.startsWith(prefix)).length, `${what}: one protective close per triggered order: ${JSON.stringify(protective)}`)
}

/** The orders resting for a position ask what the run's levels say (trigger = the level; trailing: activation and callback). */
function assertOrdersMatchLevels(what: string, p: StrategyPosition, exits: Record<string, string>): void {
  const of = (kind: string) => (p.protective_orders ?? []).filter((o) => o.kind === kind && o.status === 'NEW')
  const [stop] = of('stop_loss')
  const [take] = of('take_profit')
  const [trailing] = of('trailing_stop')
  assert.ok(stop && take && trailing && of('other').length === 0, `${what}: one order of each kind rests: ${JSON.stringify(p.protective_orders)}`)
  const close = p.side === 'buy' ? 'sell' : 'buy'
  assert.deepEqual([stop.type, stop.side, stop.close_position, stop.trigger_price], ['STOP_MARKET', close, true, p.stop_price], `${what}: the stop`)
  assert.deepEqual([take.type, take.side, take.close_position, take.trigger_price], ['TAKE_PROFIT_MARKET', close, true, p.take_profit_price], `${what}: the target`)
  assert.deepEqual([trailing.type, trailing.side, trailing.reduce_only, trailing.quantity], ['TRAILING_STOP_MARKET', close, true, p.qty], `${what}: the trailing stop`)
  assert.equal(Number(trailing.callback_rate), Number(exits.trailing_stop) * 100, `${what}: the callback`)
  if (exits.trailing_activation) assert.equal(trailing.activate_price, p.trailing?.activation_price, `${what}: the trailing stop's activation`)
  for (const o of [stop, take, trailing]) assert.equal(o.working_type, 'CONTRACT_PRICE')
}
