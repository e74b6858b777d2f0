import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Type } from 'typebox'
import { runBacktest } from '../../src/engine/index.js'
import type { BarSeries, ExitRules, Trade } from '../../src/engine/types.js'
import type { BrokerOutcome, ClosedBar } from '../../src/live/brokers/broker.js'
import { MultiPaperBroker } from '../../src/live/brokers/multi-paper-broker.js'
import { PaperBroker, type PaperSetup } from '../../src/live/brokers/paper-broker.js'
import { PAPER_FEES, paperProtection } from '../../src/live/brokers/paper-setup.js'
import { outcomeRows } from '../../src/live/record-outcome.js'
import type { RunRow } from '../../src/live/queries.js'
import { crossSectionalMomentum } from '../../src/templates/cross-sectional-momentum.js'
import { findTemplate } from '../../src/templates/registry.js'
import type { SingleSymbolTemplate } from '../../src/templates/types.js'
import { aggregate, barAt, BTCUSDT_RULES, barsFromRows, HOUR, MINUTE, NO_FUNDING, randomWalk, validParams, withoutBars } from '../engine/helpers.js'

// A dry run's paper broker steps the engine bar by bar on the minutes of each bar: it must make the
// backtest's trades over the same bars, exits and their reasons included, and survive a restart.
const START = Date.UTC(2024, 0, 1)
const QUARTER = 15 * MINUTE
const CAPITAL = 100_000
const EXITS: ExitRules = { stopLoss: 0.01, takeProfit: 0.02, trailingStop: 0.006, trailingActivation: 0.004, trigger: 'last' }
const SMA = findTemplate('sma_cross') as SingleSymbolTemplate
const SMA_PARAMS = validParams('sma_cross', { fast: 5, slow: 20, allow_short: true })

/** 1m bars of 12 days (some missing: those quarters are examined on themselves), and their 15m bars. */
function market(symbol: string, seed: number, price = 30_000) {
  const full = randomWalk(symbol, seed, 12 * 96 * 15, START, MINUTE, price, 0.002)
  const m1 = withoutBars(full, Array.from({ length: 30 }, (_, k) => START + (k * 557 + 31) * MINUTE))
  return { bars: aggregate(full, QUARTER), m1 }
}

/** The minutes of `series` inside [t, t + interval): what a runner reads for a bar. */
function minutesOf(m1: BarSeries, t: number, interval: number): ClosedBar[] {
  const out: ClosedBar[] = []
  for (let j = 0; j < m1.openTime.length; j++) if (m1.openTime[j]! >= t && m1.openTime[j]! < t + interval) out.push(barAt(m1, j))
  return out
}

const setup = (protect: PaperSetup['protect'], template = SMA, params: Record<string, unknown> = SMA_PARAMS, intervalMs = QUARTER): PaperSetup => ({
  template,
  params,
  symbol: 'BTCUSDT',
  intervalMs,
  rules: BTCUSDT_RULES,
  capital: CAPITAL,
  leverage: 5,
  fees: PAPER_FEES,
  protect,
})

/** Steps `broker` over bars [from, to), handing it the minutes it asks for (none when it asks for none). */
function step(broker: PaperBroker, bars: BarSeries, m1: BarSeries, from: number, to: number, asked: number[] = []): BrokerOutcome[] {
  const outcomes: BrokerOutcome[] = []
  for (let i = from; i < to; i++) {
    const t = bars.openTime[i]!
    const wanted = broker.minutesWanted
    if (wanted) asked.push(i)
    outcomes.push(broker.onClosedBar(barAt(bars, i), [], wanted === 'last' ? minutesOf(m1, t, QUARTER) : undefined))
  }
  return outcomes
}

const PROTECTIVE = new Set(['stop_loss', 'take_profit', 'trailing_stop'])
const withoutIds = (trades: readonly Trade[]) => trades.map(({ id: _, ...rest }) => rest)

describe("a dry run's paper broker with protective exits", () => {
  it('stepped bar by bar on each bar’s minutes makes the backtest’s trades (exit reasons and prices included); each protective exit is its own fill', () => {
    const { bars, m1 } = market('BTCUSDT', 21)
    const end = bars.openTime[bars.openTime.length - 1]!
    const expected = runBacktest({ templateId: 'sma_cross', params: SMA_PARAMS, bars: [bars], rules: [BTCUSDT_RULES], capital: CAPITAL, leverage: 5, fees: PAPER_FEES, start: START, end, exits: EXITS, detail: [{ bars: [m1] }] })
    const reasons = new Set(expected.trades.map((t) => t.exitReason))
    for (const reason of ['signal', 'stop_loss', 'take_profit', 'trailing_stop'] as const) assert.ok(reasons.has(reason), `some ${reason} exits to compare`)
    assert.ok(expected.exitResolution!.BTCUSDT!['1m']! > 100 && expected.exitResolution!.BTCUSDT!['15m']! > 0, JSON.stringify(expected.exitResolution))

    const broker = new PaperBroker(setup({ rules: EXITS }))
    assert.equal(broker.minuteKind, 'last')
    const asked: number[] = []
    const outcomes = step(broker, bars, m1, 0, bars.openTime.length, asked)
    assert.deepEqual(broker.ledger.trades, expected.trades)
    assert.equal(broker.ledger.cash + broker.ledger.unrealized(0, bars.close[bars.close.length - 1]!), expected.finalEquity)
    assert.ok(asked.length < bars.openTime.length, 'minutes are read only for bars that hold (or may open) a position')

    for (const outcome of outcomes) {
      const exits = outcome.trades.filter((t) => PROTECTIVE.has(t.exitReason))
      assert.deepEqual(
        outcome.protectiveExits.map((f) => [f.reason, f.price, f.time, f.qty]),
        exits.map((t) => [t.exitReason, t.exitPrice, t.exitTime, t.qty]),
      )
      // The intent's fills are the order's alone: a protective exit never merges into them.
      for (const fill of outcome.filledIntent?.fills ?? []) assert.ok(!outcome.protectiveExits.some((e) => e === fill))
      if (outcome.filledIntent) assert.ok(outcome.filledIntent.fills.every((f) => f.time === outcome.filledIntent!.fills[0]!.time))
    }
  })

  it('a stop at the open followed by the reversal filled at that same open: two fills on one side at one price, told apart', () => {
    // Long at 100 (stop 98); the strategy reverses at bar 1's close; bar 2 gaps to 95: the stop exits at the
    // open, then the short opens there. Matching fills by price cannot tell which is the exit.
    const targets = [1, -1, Number.NaN, Number.NaN]
    const scripted: SingleSymbolTemplate = {
      id: 'scripted',
      description: 'targets from a list',
      schema: Type.Object({}),
      minCapital: 0,
      multiSymbol: false,
      warmupBars: () => 0,
      create: () => ({ onBar: (i) => targets[i] ?? Number.NaN }),
    }
    const bars = barsFromRows('BTCUSDT', START, HOUR, [
      [100, 100, 100, 100],
      [100, 101, 99.5, 100],
      [95, 95.5, 94.5, 95],
      [95, 95.2, 94.8, 95],
    ])
    const exits: ExitRules = { stopLoss: 0.02, trigger: 'last' }
    const broker = new PaperBroker({ ...setup({ rules: exits }, scripted, {}, HOUR), capital: 1_000, leverage: 1 })
    const outcomes = [0, 1, 2, 3].map((i) => broker.onClosedBar(barAt(bars, i), [], []))
    const gap = outcomes[2]!
    assert.equal(gap.trades.length, 1)
    assert.equal(gap.trades[0]!.exitReason, 'stop_loss')
    assert.equal(gap.trades[0]!.exitPrice, 95)
    assert.deepEqual(gap.protectiveExits.map((f) => [f.reason, f.side, f.price, f.qty, f.time]), [['stop_loss', 'sell', 95, gap.trades[0]!.qty, bars.openTime[2]]])
    assert.equal(gap.filledIntent!.fills.length, 1)
    assert.equal(gap.filledIntent!.fills[0]!.side, 'sell')
    assert.equal(gap.filledIntent!.fills[0]!.price, 95)
    assert.equal(gap.qtyAfter, -gap.filledIntent!.fills[0]!.qty)

    // Booked: the intent settles with the short's fill alone; the stop is its own reduce-only order, filled,
    // with its reason, in the stream too; the closed trade and its event carry the reason.
    const run = { strategy_id: 'strat_0000abcd', run: 1, user_id: 1, symbol: 'BTCUSDT', symbols: ['BTCUSDT'] } as RunRow
    const rows = outcomeRows({ run, now: new Date(START), pendingOrder: 'pp-0000abcd-1-2', totals: { realized: 0, unrealized: 0 }, rules: BTCUSDT_RULES }, gap, { intent: 3, trade: 1 })
    assert.deepEqual(rows.settle && [rows.settle.client_order_id, rows.settle.side, rows.settle.qty, rows.settle.price], ['pp-0000abcd-1-2', 'sell', String(gap.filledIntent!.fills[0]!.qty), '95'])
    assert.equal(rows.exitOrders.length, 1)
    const order = rows.exitOrders[0]!
    assert.deepEqual(
      { id: order.client_order_id, intent: order.intent, reduce: order.reduce_only, target: order.target, status: order.status, side: order.side, price: order.price, reason: order.exit_reason, at: order.filled_at?.getTime() },
      { id: 'pp-0000abcd-1-3', intent: 3, reduce: true, target: '0', status: 'filled', side: 'sell', price: '95', reason: 'stop_loss', at: bars.openTime[2] },
    )
    assert.equal(rows.counters.intent, 4)
    assert.equal(rows.trades[0]!.exit_reason, 'stop_loss')
    const messages = rows.messages.map((m) => [m.type, m.data.exit_reason])
    assert.deepEqual(messages, [['order', undefined], ['order', 'stop_loss'], ['position_closed', 'stop_loss'], ['position_opened', undefined]])
    assert.deepEqual(rows.events.map((e) => [e.type, (e.data as { exit_reason?: string }).exit_reason]), [['strategy.position_closed', 'stop_loss'], ['strategy.position_opened', undefined]])
  })

  it('restarted from a snapshot (through JSON) mid-position keeps its levels, trailing best price and latch: the same trades as without the restart', () => {
    const { bars, m1 } = market('BTCUSDT', 23)
    const n = bars.openTime.length
    const first = new PaperBroker(setup({ rules: EXITS }))
    const states: { after: number; trades: number; state: string; what: string }[] = []
    const wanted = [
      { what: 'trailing', holds: (b: PaperBroker) => b.ledger.qty[0] !== 0 && b.ledger.exits!.exitBest[0] === b.ledger.exits!.exitBest[0] },
      { what: 'awaiting activation', holds: (b: PaperBroker) => b.ledger.qty[0] !== 0 && b.ledger.exits!.exitActivation[0] === b.ledger.exits!.exitActivation[0] },
      { what: 'latched', holds: (b: PaperBroker) => b.ledger.exits!.exitLatched[0] === 1 },
    ]
    for (let i = 0; i < n; i++) {
      step(first, bars, m1, i, i + 1)
      const next = wanted[states.length]
      if (next && i > ((states.length + 1) * n) / 5 && next.holds(first)) states.push({ after: i + 1, trades: first.ledger.trades.length, state: JSON.stringify(first.snapshot()), what: next.what })
    }
    assert.deepEqual(states.map((s) => s.what), wanted.map((w) => w.what), 'every state to restart from')
    for (const saved of states) {
      const second = new PaperBroker(setup({ rules: EXITS }), JSON.parse(saved.state))
      assert.equal(JSON.stringify(second.snapshot()), saved.state, `${saved.what}: every level, best price and latch restored`)
      // A restarted runner warms its template on the bars before (the warm-up), then acts on the rest.
      second.warm(Array.from({ length: saved.after }, (_, i) => barAt(bars, i)), [])
      step(second, bars, m1, saved.after, n)
      assert.deepEqual(withoutIds(second.ledger.trades), withoutIds(first.ledger.trades.slice(saved.trades)), `restarted ${saved.what} after bar ${saved.after}`)
      assert.equal(second.ledger.cash, first.ledger.cash)
    }
    // Protection built after restore() would have dropped them: the ledger restores levels only into levels it has.
    const late = new PaperBroker(setup(undefined), JSON.parse(states[0]!.state))
    assert.equal(late.ledger.exits, undefined)
  })

  it('a live run keeps its levels placed, never simulated (the exchange holds them); a dry run without exits reads no minutes', () => {
    assert.deepEqual(paperProtection({ dry_run: false, exits: { stop_loss: '0.02' } }), { rules: { stopLoss: 0.02, trigger: 'last' }, placed: true })
    assert.deepEqual(paperProtection({ dry_run: true, exits: { stop_loss: '0.02' } }), { rules: { stopLoss: 0.02, trigger: 'last' }, placed: false })
    assert.deepEqual(paperProtection({ dry_run: true, exits: null }), { rules: undefined, placed: false })
    // Placed: the levels are kept (the stop at the entry's fraction), but no bar ever exits the position.
    const { bars, m1 } = market('BTCUSDT', 21)
    const placed = new PaperBroker(setup({ rules: EXITS, placed: true }))
    assert.equal(placed.minuteKind, undefined)
    const askedPlaced: number[] = []
    step(placed, bars, m1, 0, 300, askedPlaced)
    assert.deepEqual(askedPlaced, [])
    assert.ok(placed.ledger.trades.length > 0 && placed.ledger.trades.every((t) => t.exitReason === 'signal' || t.exitReason === 'liquidation'))
    assert.ok(placed.ledger.qty[0] === 0 || placed.ledger.exits!.exitStop[0]! > 0)
    for (const protect of [undefined, { rules: undefined }]) {
      const broker = new PaperBroker(setup(protect))
      assert.equal(broker.minuteKind, undefined)
      const asked: number[] = []
      step(broker, bars, m1, 0, 300, asked)
      assert.deepEqual(asked, [])
      assert.ok(broker.ledger.trades.length > 0 && broker.ledger.trades.every((t) => t.exitReason === 'signal'))
    }
    // A 1m strategy examines its own bars (last price); mark triggers always read mark minutes.
    assert.equal(new PaperBroker(setup({ rules: EXITS }, SMA, SMA_PARAMS, MINUTE)).minuteKind, undefined)
    assert.equal(new PaperBroker(setup({ rules: { ...EXITS, trigger: 'mark' } }, SMA, SMA_PARAMS, MINUTE)).minuteKind, 'mark')
  })

  it('mark trigger: examined on the mark minutes it is handed, as a backtest on the same mark bars', () => {
    const { bars, m1 } = market('BTCUSDT', 25)
    // Marks a little off the trade prices, so a mark-triggered run differs from a last-triggered one.
    const mark: BarSeries = { ...m1, open: m1.open.map((x) => x * 1.0004), high: m1.high.map((x) => x * 1.0009), low: m1.low.map((x) => x * 0.9991), close: m1.close.map((x) => x * 1.0004) }
    const exits: ExitRules = { ...EXITS, trigger: 'mark' }
    const end = bars.openTime[bars.openTime.length - 1]!
    const input = { templateId: 'sma_cross', params: SMA_PARAMS, bars: [bars], rules: [BTCUSDT_RULES], capital: CAPITAL, leverage: 5, fees: PAPER_FEES, start: START, end }
    const expected = runBacktest({ ...input, exits, detail: [{ mark: [mark] }] })
    const onLast = runBacktest({ ...input, exits: EXITS, detail: [{ bars: [m1] }] })
    assert.notDeepEqual(expected.trades, onLast.trades, 'the marks change the exits')
    const broker = new PaperBroker(setup({ rules: exits }))
    for (let i = 0; i < bars.openTime.length; i++) {
      const wanted = broker.minutesWanted
      broker.onClosedBar(barAt(bars, i), [], wanted === 'mark' ? minutesOf(mark, bars.openTime[i]!, QUARTER) : undefined)
    }
    assert.deepEqual(broker.ledger.trades, expected.trades)
  })
})

describe("a many-symbol dry run's paper broker with protective exits", () => {
  it('stepped one step at a time on each symbol’s minutes ends where the backtest ends, trade for trade, exit reasons included', () => {
    const a = market('AAAUSDT', 31, 30_000)
    const b = market('BBBUSDT', 37, 2_000)
    const params = { lookback: 8, rebalance_every: 4, long_count: 1, short_count: 1 }
    const end = a.bars.openTime[a.bars.openTime.length - 1]!
    const expected = runBacktest({
      templateId: 'cross_sectional_momentum',
      params,
      bars: [a.bars, b.bars],
      rules: [BTCUSDT_RULES, BTCUSDT_RULES],
      capital: CAPITAL,
      leverage: 3,
      fees: PAPER_FEES,
      start: START,
      end,
      exits: EXITS,
      detail: [{ bars: [a.m1] }, { bars: [b.m1] }],
    })
    const reasons = new Set(expected.trades.map((t) => t.exitReason))
    for (const reason of ['stop_loss', 'trailing_stop'] as const) assert.ok(reasons.has(reason), `some ${reason} exits to compare: ${[...reasons]}`)

    const broker = new MultiPaperBroker({ template: crossSectionalMomentum, params, symbols: ['AAAUSDT', 'BBBUSDT'], intervalMs: QUARTER, rules: [BTCUSDT_RULES, BTCUSDT_RULES], capital: CAPITAL, leverage: 3, fees: PAPER_FEES, protect: { rules: EXITS } })
    const exitFills: string[] = []
    for (let i = 0; i < a.bars.openTime.length; i++) {
      const t = a.bars.openTime[i]!
      const minutes = [a, b].map((m, s) => (broker.minutesWanted(s) ? minutesOf(m.m1, t, QUARTER) : undefined))
      const outcome = broker.onStep({ openTime: t, bars: [barAt(a.bars, i), barAt(b.bars, i)] }, [NO_FUNDING, NO_FUNDING].map(() => []), minutes)
      for (const part of outcome.symbols) exitFills.push(...part.protectiveExits.map((f) => `${part.symbol} ${f.reason} ${f.time}`))
    }
    assert.deepEqual(broker.ledger.trades, expected.trades)
    // A rebalance may have reduced the position first: the trade's exit price averages both, the exit fill is the close's own.
    assert.deepEqual(
      exitFills,
      expected.trades.filter((t) => PROTECTIVE.has(t.exitReason)).map((t) => `${t.symbol} ${t.exitReason} ${t.exitTime}`),
    )
  })
})
