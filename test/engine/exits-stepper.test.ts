import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DailyCurve } from '../../src/engine/daily-curve.js'
import { ExitGuard } from '../../src/engine/exit-guard.js'
import type { ExitLevels } from '../../src/engine/exit-levels.js'
import { feeRates } from '../../src/engine/fees.js'
import { Ledger, type LedgerState } from '../../src/engine/ledger.js'
import { simulateSingle } from '../../src/engine/simulate.js'
import { SingleSymbolStepper } from '../../src/engine/single-stepper.js'
import type { BarSeries, ExitRules, Trade } from '../../src/engine/types.js'
import { findTemplate } from '../../src/templates/registry.js'
import type { SingleSymbolSignal, SingleSymbolTemplate } from '../../src/templates/types.js'
import { BTCUSDT_RULES, MINUTE, NO_FUNDING, aggregate, random, randomWalk, validParams, withoutBars } from './helpers.js'

// A runner steps the engine bar by bar over series that grow as bars close, and may restart from a
// snapshot: with exits it must still agree with the backtest of the same bars, trade for trade.
const START = Date.UTC(2024, 0, 1)
const QUARTER = 15 * MINUTE
const CAPITAL = 100_000
const FEES = feeRates('match_exchange')

/** 1m bars (some missing), their 5m bars (some missing) and the 15m strategy bars of 20 days. */
function market(seed: number) {
  const full = randomWalk('BTCUSDT', seed, 20 * 96 * 15, START, MINUTE, 30_000, 0.002)
  // Quarters 100k + 7 lack a 1m and a 5m bar (examined on themselves); others lack one or the other.
  const both = Array.from({ length: 19 }, (_, k) => START + (100 * k + 7) * QUARTER)
  const m1 = withoutBars(full, [...both.map((t) => t + 3 * MINUTE), ...Array.from({ length: 40 }, (_, k) => START + (k * 701 + 13) * MINUTE)])
  const m5 = withoutBars(aggregate(full, 5 * MINUTE), [...both, ...Array.from({ length: 10 }, (_, k) => START + (k * 577 + 35) * 5 * MINUTE)])
  return { bars: aggregate(full, QUARTER), m1, m5 }
}

/** A stateless signal (a function of the bar index and its close): targets and levels, some of them on the wrong side. */
class RandomLevels implements SingleSymbolSignal {
  readonly levels = new Float64Array(2)
  constructor(private readonly series: BarSeries) {}
  onBar(i: number): number {
    const r = random(i * 7919 + 3)()
    const c = this.series.close[i]!
    if (r < 0.04) return this.state(1, c * 0.996, c * 1.01)
    if (r < 0.08) return this.state(-1, c * 1.004, 0)
    if (r < 0.1) return 0
    if (r < 0.13) return this.state(Number.NaN, c * (r < 0.12 ? 0.995 : 1.002), Number.NaN)
    if (r < 0.15) return this.state(0.5, Number.NaN, Number.NaN)
    return Number.NaN
  }
  private state(target: number, stop: number, take: number): number {
    this.levels[0] = stop
    this.levels[1] = take
    return target
  }
}

/** A view of the first `count` bars, as a runner's grown series. */
function firstBars(series: BarSeries, count: number): BarSeries {
  const view = (a: Float64Array) => a.subarray(0, count)
  return { ...series, openTime: view(series.openTime), open: view(series.open), high: view(series.high), low: view(series.low), close: view(series.close), volume: view(series.volume) }
}

interface Runner {
  ledger: Ledger
  stepper: SingleSymbolStepper
  signal: SingleSymbolSignal
  grow(i: number): void
}

/** A runner's engine: series that hold only the bars closed so far, swapped for longer views before each bar. */
function runner(bars: BarSeries, m1: BarSeries, m5: BarSeries, exits: ExitRules, makeSignal: (series: BarSeries) => SingleSymbolSignal, state?: { ledger: LedgerState; pending: number }): Runner {
  const growing = firstBars(bars, 0)
  const g1 = firstBars(m1, 0)
  const g5 = firstBars(m5, 0)
  const ledger = new Ledger(['BTCUSDT'], [BTCUSDT_RULES], CAPITAL, 5, FEES.takerRate)
  ledger.slippage = 0.0003
  const signal = makeSignal(growing)
  const stepper = new SingleSymbolStepper(ledger, new DailyCurve(START, CAPITAL), growing, NO_FUNDING, signal)
  stepper.guard = new ExitGuard(ledger, exits, QUARTER, [{ bars: [g1, g5] }])
  if (state) {
    ledger.restore(state.ledger)
    stepper.pending = state.pending
  }
  const grow = (i: number) => {
    Object.assign(growing, firstBars(bars, i + 1))
    const end = bars.openTime[i]! + QUARTER
    for (const [view, all] of [[g1, m1], [g5, m5]] as const) {
      let n = view.openTime.length
      while (n < all.openTime.length && all.openTime[n]! < end) n++
      Object.assign(view, firstBars(all, n))
    }
  }
  return { ledger, stepper, signal, grow }
}

/**
 * Steps a runner through every bar, snapshotting (through JSON) after bars that leave the state each
 * `wanted` test asks for in turn, then restarts a new runner from each snapshot (its signal warmed on the
 * bars before) and steps it to the end: the trades after the snapshot and the cash must be the backtest's.
 */
function assertRestarts(bars: BarSeries, m1: BarSeries, m5: BarSeries, exits: ExitRules, makeSignal: (series: BarSeries) => SingleSymbolSignal, expected: Ledger, wanted: ((x: ExitLevels, ledger: Ledger) => boolean)[]) {
  const n = bars.openTime.length
  const first = runner(bars, m1, m5, exits, makeSignal)
  const snapshots: { after: number; trades: number; state: string }[] = []
  const count = 3 * wanted.length
  for (let i = 0; i < n; i++) {
    first.grow(i)
    first.stepper.run(i, i + 1)
    const k = snapshots.length
    if (k < count && i > (k * n) / (count + 1) && wanted[k % wanted.length]!(first.ledger.exits!, first.ledger)) {
      snapshots.push({ after: i + 1, trades: first.ledger.trades.length, state: JSON.stringify({ ledger: first.ledger.snapshot(), pending: first.stepper.pending }) })
    }
  }
  assert.deepEqual(first.ledger.trades, expected.trades)
  assert.equal(snapshots.length, count, 'every state to restart from')
  for (const snapshot of snapshots) {
    const saved = JSON.parse(snapshot.state) as { ledger: LedgerState; pending: number | null }
    const second = runner(bars, m1, m5, exits, makeSignal, { ledger: saved.ledger, pending: saved.pending ?? Number.NaN })
    assert.equal(JSON.stringify(second.ledger.snapshot()), JSON.stringify(saved.ledger), 'every array restored')
    for (let i = 0; i < snapshot.after; i++) {
      second.grow(i)
      second.signal.onBar(i)
    }
    for (let i = snapshot.after; i < n; i++) {
      second.grow(i)
      second.stepper.run(i, i + 1)
    }
    assert.deepEqual(withoutIds(second.ledger.trades), withoutIds(expected.trades.slice(snapshot.trades)), `restarted after bar ${snapshot.after}`)
    assert.equal(second.ledger.cash, expected.cash)
  }
}

const trailing = (x: ExitLevels, ledger: Ledger) => ledger.qty[0] !== 0 && x.exitBest[0] === x.exitBest[0]
const untrailed = (x: ExitLevels, ledger: Ledger) => ledger.qty[0] !== 0 && x.exitBest[0] !== x.exitBest[0]
const signalStop = (x: ExitLevels) => x.exitModuleStop[0] === x.exitModuleStop[0]
const latched = (x: ExitLevels) => x.exitLatched[0] === 1

function backtest(bars: BarSeries, m1: BarSeries, m5: BarSeries, exits: ExitRules, signal: SingleSymbolSignal) {
  const setup = { bars: [bars], funding: [NO_FUNDING], rules: [BTCUSDT_RULES], capital: CAPITAL, leverage: 5, fees: FEES, start: START, end: bars.openTime[bars.openTime.length - 1]! }
  return simulateSingle({ ...setup, exits, slippageBps: 3, detail: [{ bars: [m1, m5] }] }, signal)
}

const withoutIds = (trades: readonly Trade[]) => trades.map(({ id: _, ...rest }) => rest)

describe('exits stepped bar by bar', () => {
  it('sma_cross with stop, target and trailing: bar by bar over growing series, and restarted from snapshots, equals the backtest', () => {
    const { bars, m1, m5 } = market(11)
    const exits: ExitRules = { stopLoss: 0.01, takeProfit: 0.02, trailingStop: 0.006, trailingActivation: 0.004, trigger: 'last' }
    const template = findTemplate('sma_cross') as SingleSymbolTemplate
    const params = validParams('sma_cross', { fast: 5, slow: 20, allow_short: true }) as never
    const make = (series: BarSeries) => template.create({ bars: [series], funding: [NO_FUNDING], rules: [BTCUSDT_RULES] }, params)
    const expected = backtest(bars, m1, m5, exits, make(bars))
    const reasons = new Set(expected.ledger.trades.map((t) => t.exitReason))
    for (const reason of ['signal', 'stop_loss', 'take_profit', 'trailing_stop']) assert.ok(reasons.has(reason as Trade['exitReason']), `some ${reason} exits to compare`)
    const resolution = expected.guard!.resolution().BTCUSDT!
    assert.ok(resolution['1m']! > 100 && resolution['5m']! > 5 && resolution['15m']! > 0, `every resolution used: ${JSON.stringify(resolution)}`)

    const { ledger, stepper, grow } = runner(bars, m1, m5, exits, make)
    for (let i = 0; i < bars.openTime.length; i++) {
      grow(i)
      stepper.run(i, i + 1)
    }
    assert.deepEqual(ledger.trades, expected.ledger.trades)
    assert.equal(ledger.cash, expected.ledger.cash)
    assertRestarts(bars, m1, m5, exits, make, expected.ledger, [trailing, untrailed])
  })

  it('a signal’s levels, the latch and a restart from a snapshot (through JSON): the same trades as without the restart', () => {
    const { bars, m1, m5 } = market(12)
    const exits: ExitRules = { stopLoss: 0.006, trailingStop: 0.005, trailingActivation: 0.003, trigger: 'last' }
    const expected = backtest(bars, m1, m5, exits, new RandomLevels(bars))
    const trades = expected.ledger.trades
    assert.ok(trades.filter((t) => t.exitReason === 'stop_loss').length > 20, 'stops to compare')
    assert.ok(trades.some((t) => t.exitTime % MINUTE === 0 && t.exitReason === 'stop_loss'), 'exits at an open (gaps or wrong-side levels)')
    assert.ok(trades.some((t) => t.exitReason === 'trailing_stop'), 'trailing exits')

    assertRestarts(bars, m1, m5, exits, (series) => new RandomLevels(series), expected.ledger, [trailing, signalStop, latched])
  })
})
