import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BacktestCancelledError, BacktestParamsError, ENGINE_SEMANTICS, feeRates, runBacktest, type BacktestInput } from '../../src/engine/index.js'
import { BINANCE_USDM_FEE_TIERS } from '../../src/engine/fees.js'
import { simulateMulti, simulateSingle } from '../../src/engine/simulate.js'
import type { BarSeries } from '../../src/engine/types.js'
import type { MultiSymbolSignal } from '../../src/templates/types.js'
import { BTCUSDT_RULES, DAY, HOUR, NO_FUNDING, ScheduleSignal, barsFromCloses, barsFromRows, loadMultiDaily, randomBars } from './helpers.js'

const START = Date.UTC(2024, 0, 1)

function input(overrides: Partial<BacktestInput> = {}): BacktestInput {
  const bars = randomBars('BTCUSDT', 3, 24 * 60, START, HOUR)
  return {
    templateId: 'sma_cross',
    params: { fast: 5, slow: 20 },
    bars: [bars],
    rules: [BTCUSDT_RULES],
    capital: 10_000,
    leverage: 2,
    fees: feeRates('fixed_bps', 5),
    start: START,
    end: START + (24 * 60 - 1) * HOUR,
    ...overrides,
  }
}

describe('feeRates', () => {
  it('maps each fee_model to per-fill rates', () => {
    assert.deepEqual(feeRates('none'), { makerRate: 0, takerRate: 0 })
    assert.deepEqual(feeRates('fixed_bps'), { makerRate: 0.0005, takerRate: 0.0005 }, 'fee_bps defaults to 5')
    assert.deepEqual(feeRates('fixed_bps', 2.5), { makerRate: 0.00025, takerRate: 0.00025 })
    assert.deepEqual(feeRates('tiered_maker_taker'), { makerRate: 0.0002, takerRate: 0.0005 })
    assert.deepEqual(feeRates('match_exchange'), { makerRate: 0.0002, takerRate: 0.0005 })
    assert.throws(() => feeRates('fixed_bps', -1), RangeError)
    assert.equal(BINANCE_USDM_FEE_TIERS.length, 10)
  })
})

describe('runBacktest', () => {
  it('uses only bars inside [start, end]: bars before start change nothing (no warm-up)', () => {
    const base = input()
    const earlier = randomBars('BTCUSDT', 99, 500, START - 500 * HOUR, HOUR)
    const bars = base.bars[0]!
    const joined: BarSeries = {
      ...bars,
      openTime: Float64Array.from([...earlier.openTime, ...bars.openTime]),
      open: Float64Array.from([...earlier.open, ...bars.open]),
      high: Float64Array.from([...earlier.high, ...bars.high]),
      low: Float64Array.from([...earlier.low, ...bars.low]),
      close: Float64Array.from([...earlier.close, ...bars.close]),
      volume: Float64Array.from([...earlier.volume, ...bars.volume]),
    }
    const plain = runBacktest(base)
    const withHistory = runBacktest({ ...base, bars: [joined] })
    assert.ok(plain.trades.length > 5)
    assert.deepEqual(withHistory, plain)
    // And the end bound is inclusive: one bar less at the end is a different run.
    assert.equal(runBacktest({ ...base, end: base.end - HOUR }).barsProcessed, plain.barsProcessed - 1)
  })

  it('returns the resolved params and is deterministic', () => {
    const first = runBacktest(input())
    assert.deepEqual(first.params, { fast: 5, slow: 20, allow_short: false })
    assert.deepEqual(runBacktest(input()), first)
  })

  it('reports progress and stops when onProgress answers false', () => {
    const bars = randomBars('BTCUSDT', 4, 300_000, START, 60_000)
    const seen: number[] = []
    runBacktest(input({ bars: [bars], end: START + 300_000 * 60_000, onProgress: (f) => (seen.push(f), true) }))
    assert.ok(seen.length >= 4)
    for (let k = 1; k < seen.length; k++) assert.ok(seen[k]! > seen[k - 1]!)
    assert.ok(seen[seen.length - 1]! <= 1)
    let calls = 0
    assert.throws(
      () => runBacktest(input({ bars: [bars], end: START + 300_000 * 60_000, onProgress: () => ++calls < 2 })),
      (error: unknown) => error instanceof BacktestCancelledError && error.progress > 0 && error.progress < 1,
    )
    assert.equal(calls, 2, 'stopped at the first false')
  })

  it('refuses bad params with BacktestParamsError naming the field and bad input with RangeError', () => {
    assert.throws(() => runBacktest(input({ params: { fast: 50, slow: 20 } })), (e: unknown) => e instanceof BacktestParamsError && e.problem.field === 'params.fast')
    assert.throws(() => runBacktest(input({ templateId: 'nope' })), (e: unknown) => e instanceof BacktestParamsError && e.problem.field === 'template_id')
    assert.throws(() => runBacktest(input({ leverage: 21 })), RangeError)
    assert.throws(() => runBacktest(input({ capital: 0 })), RangeError)
    assert.throws(() => runBacktest(input({ rules: [] })), RangeError)
    assert.throws(() => runBacktest(input({ start: START + DAY, end: START })), RangeError)
    const corrupt = randomBars('BTCUSDT', 3, 100, START, HOUR)
    corrupt.close[50] = Number.NaN
    assert.throws(() => runBacktest(input({ bars: [corrupt] })), /BTCUSDT: the bar at \d+ has a missing or non-positive open or close/)
  })

  it('an empty range gives the capital back with undefined metrics', () => {
    const result = runBacktest(input({ start: START - 10 * DAY, end: START - DAY }))
    assert.equal(result.barsProcessed, 0)
    assert.deepEqual(result.equityCurve, [[START - 10 * DAY, 10_000]])
    assert.equal(result.finalEquity, 10_000)
    assert.equal(result.metrics.sharpe, null)
    assert.equal(result.metrics.totalTrades, 0)
    assert.equal(result.gaps.length, 1, 'the whole range is one gap')
  })

  it('caps a position at the notional the leverage tiers allow', () => {
    // 100 M USDT at 20×: BTCUSDT allows 20 M of notional at 20× (tier 4's cap), not 2 B.
    const bars = barsFromCloses('BTCUSDT', START, HOUR, [...Array.from({ length: 25 }, (_, k) => 50_000 - k * 10), ...Array.from({ length: 10 }, (_, k) => 49_800 + k * 100)])
    const result = runBacktest(input({ bars: [bars], capital: 100_000_000, leverage: 20, params: { fast: 2, slow: 3 }, end: START + 40 * HOUR }))
    const position = result.openPositions[0] ?? result.trades[0]
    assert.ok(position)
    assert.ok(position.qty * position.entryPrice <= 20_000_000, `${position.qty} × ${position.entryPrice}`)
    assert.ok(position.qty * position.entryPrice > 19_900_000)
  })

  it('skips orders below minNotional or minQty, and still closes whole positions', () => {
    const bars = barsFromCloses('BTCUSDT', START, HOUR, [30_000, 30_000, 30_000, 30_000, 30_000])
    const setup = (capital: number) => ({
      bars: [bars],
      funding: [NO_FUNDING],
      rules: [BTCUSDT_RULES],
      capital,
      leverage: 1,
      fees: feeRates('fixed_bps', 5),
      start: START,
      end: START + 4 * HOUR,
    })
    // 90 USDT buys floor(90 / 30015 / 0.001) × 0.001 = 0.002 BTC = 60 USDT < minNotional 100: skipped.
    assert.equal(simulateSingle(setup(90), new ScheduleSignal(new Map([[0, 1], [2, 0]]))).ledger.trades.length, 0)
    // 20 USDT buys 0.000 BTC (< minQty 0.001): skipped.
    assert.equal(simulateSingle(setup(20), new ScheduleSignal(new Map([[0, 1]]))).ledger.qty[0], 0)
    // 200 USDT buys 0.006 BTC (180 USDT); halving it would sell 0.003 (90 USDT < 100): skipped, but the close goes through.
    const { ledger } = simulateSingle(setup(200), new ScheduleSignal(new Map([[0, 1], [1, 0.5], [2, 0]])))
    assert.equal(ledger.trades.length, 1)
    assert.equal(ledger.trades[0]!.qty, 0.006)
    assert.equal(ledger.trades[0]!.exitTime, START + 3 * HOUR)
  })

  it('documents its semantics for the API', () => {
    for (const phrase of ['next bar\'s open', 'stepSize', 'markPrice', 'maintenance margin', 'marked at the last close', 'ddof 1', 'null', 'VIP 0']) {
      assert.ok(ENGINE_SEMANTICS.includes(phrase), phrase)
    }
  })
})

describe('several symbols', () => {
  /** States the given targets (per symbol) at the given steps. */
  class Schedule implements MultiSymbolSignal {
    constructor(private readonly plan: Map<number, number[]>) {}
    private step = -1
    onStep(_at: Int32Array, targets: Float64Array): boolean {
      const plan = this.plan.get(++this.step)
      if (!plan) return false
      plan.forEach((t, s) => (targets[s] = t))
      return true
    }
  }

  it('sizes every leg from the account equity and fills each symbol at its own next bar', () => {
    const a = barsFromRows('AUSDT', START, HOUR, [
      [100, 100, 100, 100],
      [100, 110, 100, 110], // buy A at 100
      [110, 110, 110, 110], // resize: A 0.5 → 0.25 at 110
      [110, 110, 110, 110],
    ])
    // B has no bar at 02:00: its order from step 1 waits for 03:00.
    const b = barsFromRows('BUSDT', START, HOUR, [
      [50, 50, 50, 50],
      [50, 50, 50, 50], // sell B at 50
      [40, 40, 40, 40],
    ])
    b.openTime[2] = START + 3 * HOUR
    const rules = { ...BTCUSDT_RULES, minNotional: 0 }
    const { ledger } = simulateMulti(
      { bars: [a, b], funding: [NO_FUNDING, NO_FUNDING], rules: [rules, rules], capital: 1000, leverage: 1, fees: feeRates('none'), start: START, end: START + 3 * HOUR },
      new Schedule(new Map([[0, [0.5, -0.5]], [1, [0.25, 0]]])),
    )
    // Step 1 (01:00): equity 1000 → A: 500 / 100 = 5 long; B: 500 / 50 = 10 short.
    // Step 2 (02:00): equity 1000 + 5 × (110 − 100) + B marked at its last close 50 (no bar) → 1050; A → 0.25 × 1050 / 110 = 2.386.
    // Step 3 (03:00): B's close order fills at B's next bar, 40: +100.
    assert.equal(ledger.qty[0], 2.386)
    assert.equal(ledger.qty[1], 0)
    const [bTrade] = ledger.trades
    assert.equal(bTrade!.symbol, 'BUSDT')
    assert.equal(bTrade!.side, 'sell')
    assert.equal(bTrade!.qty, 10)
    assert.equal(bTrade!.exitTime, START + 3 * HOUR)
    assert.equal(bTrade!.pnl, 100)
    // A's partial reduction realized (5 − 2.386) × 10 into cash: 1000 + 26.14 + 100.
    assert.ok(Math.abs(ledger.cash - (1000 + 2.614 * 10 + 100)) < 1e-9)
  })

  it('runs cross_sectional_momentum on real daily data of three symbols', () => {
    const bars = loadMultiDaily(['BTCUSDT', 'ETHUSDT', 'XRPUSDT'])
    const result = runBacktest({
      templateId: 'cross_sectional_momentum',
      params: { lookback: 30, rebalance_every: 7, long_count: 1, short_count: 1 },
      bars,
      rules: bars.map(() => ({ ...BTCUSDT_RULES, minNotional: 5 })),
      capital: 10_000,
      leverage: 1,
      fees: feeRates('match_exchange'),
      start: Date.UTC(2023, 0, 1),
      end: Date.UTC(2024, 11, 31),
    })
    assert.equal(result.barsProcessed, 3 * 731)
    assert.deepEqual(result.gaps, [])
    assert.ok(result.trades.length > 50, `${result.trades.length} trades`)
    assert.equal(result.equityCurve.length, 732)
    assert.deepEqual(new Set(result.trades.map((t) => t.symbol)), new Set(['BTCUSDT', 'ETHUSDT', 'XRPUSDT']))
  })
})
