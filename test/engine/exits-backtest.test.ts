import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Type } from 'typebox'
import { type BacktestInput, ENGINE_SEMANTICS, feeRates, runBacktest } from '../../src/engine/index.js'
import { MissingMarkBars } from '../../src/engine/exit-guard.js'
import { ceilToStep, floorToStep } from '../../src/engine/steps.js'
import type { BarSeries, ExitRules, Trade } from '../../src/engine/types.js'
import { TEMPLATES } from '../../src/templates/registry.js'
import type { SingleSymbolTemplate } from '../../src/templates/types.js'
import { BTCUSDT_RULES, MINUTE, ScheduleSignal, aggregate, assertConserved, assertCurveShape, isStepMultiple, random, randomWalk } from './helpers.js'

const START = Date.UTC(2024, 0, 1)
const QUARTER = 15 * MINUTE
const SEEDS = [1, 2, 3, 4]
const SYMBOLS = ['BTCUSDT', 'ETHUSDT', 'XRPUSDT']
const RULES = { ...BTCUSDT_RULES, minNotional: 5 }

/** 1m random walks of `quarters` 15m bars per symbol, and those 15m bars. */
function market(seed: number, count: number, quarters: number) {
  const minutes = Array.from({ length: count }, (_, s) => randomWalk(SYMBOLS[s]!, seed * 10 + s, quarters * 15, START, MINUTE, 20_000 + 10_000 * s, 0.003))
  return { minutes, bars: minutes.map((m1) => aggregate(m1, QUARTER)) }
}

function input(bars: BarSeries[], overrides: Partial<BacktestInput>): BacktestInput {
  return {
    templateId: 'sma_cross',
    params: {},
    bars,
    rules: bars.map(() => RULES),
    capital: 5_000,
    leverage: 3,
    fees: feeRates('fixed_bps', 5),
    start: START,
    end: bars[0]!.openTime[bars[0]!.openTime.length - 1]!,
    ...overrides,
  }
}

/** A template around a fixed signal, for runBacktest. */
function scheduled(schedule: ReadonlyMap<number, number>): SingleSymbolTemplate {
  return { id: 'scheduled', description: 'test', schema: Type.Object({}), minCapital: 0, warmupBars: () => 0, multiSymbol: false, create: () => new ScheduleSignal(schedule) }
}

describe('runBacktest with protective exits', () => {
  it('every template over random 1m walks: conservation, curve shape, step-size quantities, counts that add up', () => {
    for (const template of TEMPLATES) {
      for (const seed of SEEDS) {
        const next = random(seed)
        const { minutes, bars } = market(seed, template.multiSymbol ? 3 : 1, 1500)
        const exits: ExitRules = {
          stopLoss: 0.005 + next() * 0.02,
          takeProfit: 0.01 + next() * 0.03,
          ...(seed % 2 === 0 ? { trailingStop: 0.004 + next() * 0.01, trailingActivation: next() * 0.01 } : {}),
          trigger: 'last',
        }
        const params: Record<string, unknown> = template.id === 'cross_sectional_momentum' ? { lookback: 24, rebalance_every: 12, long_count: 1, short_count: 1 } : {}
        if ('allow_short' in template.schema.properties) params.allow_short = seed % 2 === 0
        const result = runBacktest(input(bars, { templateId: template.id, params, exits, slippageBps: seed, leverage: [1, 3, 10, 20][seed % 4]!, detail: minutes.map((m1) => ({ bars: [m1] })) }))
        const what = `${template.id} seed ${seed}`
        assertConserved(result, 5_000, what)
        assertCurveShape(result, START, 5_000, what)
        for (const trade of result.trades) assert.ok(isStepMultiple(trade.qty, 0.001), `${what}: trade qty ${trade.qty}`)
        const reasons = result.metrics.exitReasons!
        assert.equal(Object.values(reasons).reduce((a, b) => a + b, 0), result.trades.length, `${what}: every trade counted once`)
        assert.ok(result.trades.length === 0 || reasons.signal + reasons.liquidation < result.trades.length, `${what}: some protective exits`)
        const ambiguous = result.ambiguousExits!
        assert.equal(Object.values(ambiguous.bySymbol).reduce((a, b) => a + b, 0), ambiguous.total)
        assert.deepEqual(Object.keys(result.exitResolution!).sort(), bars.map((b) => b.symbol).sort())
        for (const bySeries of Object.values(result.exitResolution!)) assert.deepEqual(Object.keys(bySeries), Object.keys(bySeries).length > 0 ? ['1m'] : [], `${what}: resolved on 1m`)
      }
    }
  })

  it('a stop fills at its level or worse, a target at its level or better, never the other way', () => {
    for (const seed of SEEDS) {
      const next = random(seed * 31)
      const { minutes, bars } = market(seed, 1, 2000)
      const schedule = new Map<number, number>()
      // Each stated target differs from the last, so every trip is one fill in and one fill out.
      let last = 0
      for (let i = 0; i < 2000; i++) {
        if (next() >= 0.05) continue
        const choices = [1, -1, 0].filter((x) => x !== last)
        last = choices[Math.floor(next() * choices.length)]!
        schedule.set(i, last)
      }
      const exits: ExitRules = { stopLoss: 0.01, takeProfit: 0.015, trigger: 'last' }
      const result = runBacktest(input(bars, { templateId: 'scheduled', template: scheduled(schedule), exits, fees: feeRates('none'), leverage: 1, detail: [{ bars: minutes }] }))
      const protective = result.trades.filter((t) => t.exitReason === 'stop_loss' || t.exitReason === 'take_profit')
      assert.ok(protective.length > 20, `seed ${seed}: ${protective.length} protective exits`)
      for (const trade of protective) {
        const long = trade.side === 'buy'
        const stop = long ? floorToStep(trade.entryPrice * (1 - 0.01), 0.1, 1) : ceilToStep(trade.entryPrice * (1 + 0.01), 0.1, 1)
        const take = long ? ceilToStep(trade.entryPrice * (1 + 0.015), 0.1, 1) : floorToStep(trade.entryPrice * (1 - 0.015), 0.1, 1)
        const what = `seed ${seed} trade ${trade.id} (${trade.side} at ${trade.entryPrice}, ${trade.exitReason} at ${trade.exitPrice})`
        if (trade.exitReason === 'stop_loss') assert.ok(long ? trade.exitPrice <= stop : trade.exitPrice >= stop, what)
        else assert.ok(long ? trade.exitPrice >= take : trade.exitPrice <= take, what)
        assert.ok(trade.exitTime >= trade.entryTime, what)
      }
    }
  })

  it('without exits the result is the same with or without finer bars, and has no exit keys', () => {
    const { minutes, bars } = market(5, 1, 1000)
    const plain = runBacktest(input(bars, {}))
    assert.deepEqual(runBacktest(input(bars, { slippageBps: 0, detail: [{ bars: minutes }] })), plain)
    for (const key of ['exitResolution', 'ambiguousExits']) assert.ok(!(key in plain), key)
    assert.ok(!('exitReasons' in plain.metrics))
  })

  it('a signal that has levels but states none keeps the plain result; once it states one, the run reports exits', () => {
    const { bars } = market(7, 1, 200)
    const schedule = new Map([[10, 1], [60, 0], [100, -1], [150, 0]])
    const plain = runBacktest(input(bars, { templateId: 'scheduled', template: scheduled(schedule) }))
    const withLevels = (stated: ReadonlyMap<number, number>) => {
      const signal = Object.assign(new ScheduleSignal(schedule), { levels: new Float64Array(2) })
      const onBar = signal.onBar.bind(signal)
      signal.onBar = (i: number) => {
        if (stated.has(i)) signal.levels[0] = stated.get(i)!
        return onBar(i)
      }
      const template: SingleSymbolTemplate = { ...scheduled(schedule), create: () => signal }
      return runBacktest(input(bars, { templateId: 'scheduled', template }))
    }
    const silent = withLevels(new Map())
    assert.deepEqual(silent, plain, 'the same trades and curve, and no exit keys')
    // A removal is a statement too: the result says the run had module levels, though none filled.
    const removed = withLevels(new Map([[20, 0]]))
    assert.deepEqual(removed.trades, plain.trades)
    assert.deepEqual(removed.metrics.exitReasons, { signal: plain.trades.length, liquidation: 0, adl: 0, stop_loss: 0, take_profit: 0, trailing_stop: 0 })
    assert.ok('exitResolution' in removed && 'ambiguousExits' in removed)
  })

  it('slippage changes prices, not how sizes are computed: the same trades with worse fills', () => {
    const { bars } = market(6, 1, 1500)
    const plain = runBacktest(input(bars, { params: { allow_short: true }, fees: feeRates('none'), leverage: 1 }))
    const slipped = runBacktest(input(bars, { params: { allow_short: true }, fees: feeRates('none'), leverage: 1, slippageBps: 10 }))
    assert.ok(plain.trades.length > 10)
    assert.equal(slipped.trades.length, plain.trades.length)
    const worse = (a: Trade, b: Trade) => (a.side === 'buy' ? b.entryPrice > a.entryPrice && b.exitPrice < a.exitPrice : b.entryPrice < a.entryPrice && b.exitPrice > a.exitPrice)
    plain.trades.forEach((trade, k) => {
      const other = slipped.trades[k]!
      assert.equal(other.entryTime, trade.entryTime)
      assert.ok(worse(trade, other), `trade ${k}`)
    })
    assert.equal(slipped.trades[0]!.qty, plain.trades[0]!.qty, 'the first order is sized on the same open and equity')
    assert.ok(slipped.finalEquity < plain.finalEquity)
  })

  it('reports the resolution by timeframe label and the mark prefix; fails without mark bars', () => {
    const { minutes, bars } = market(7, 1, 300)
    const exits: ExitRules = { stopLoss: 0.01, trigger: 'mark' }
    const schedule = new Map([[0, 1]])
    const base = input(bars, { templateId: 'scheduled', template: scheduled(schedule), exits })
    const marked = runBacktest({ ...base, detail: [{ bars: minutes, mark: [aggregate(minutes[0]!, 5 * MINUTE)] }] })
    assert.deepEqual(Object.keys(marked.exitResolution!.BTCUSDT!), ['mark_5m'])
    assert.throws(() => runBacktest({ ...base, detail: [{ bars: minutes }] }), MissingMarkBars)
    // Mark bars outside the range are none for the run.
    const before = aggregate(randomWalk('BTCUSDT', 3, 60, START - 60 * MINUTE, MINUTE, 20_000, 0.003), 5 * MINUTE)
    assert.throws(() => runBacktest({ ...base, detail: [{ mark: [before] }] }), MissingMarkBars)
  })

  it('refuses malformed exit input with RangeError', () => {
    const { minutes, bars } = market(8, 1, 100)
    const bad: Partial<BacktestInput>[] = [
      { slippageBps: -1 },
      { exits: { stopLoss: 0, trigger: 'last' } },
      { exits: { takeProfit: Number.NaN, trigger: 'last' } },
      { exits: { trailingActivation: 0.01, trigger: 'last' } },
      { exits: { stopLoss: 0.01, trigger: 'close' as 'last' } },
      { detail: [] },
      { detail: [{ bars: [{ ...minutes[0]!, intervalMs: 7 * MINUTE }] }] },
      { detail: [{ bars: [{ ...minutes[0]!, symbol: 'ETHUSDT' }] }] },
      { detail: [{ bars: [{ ...minutes[0]!, openTime: minutes[0]!.openTime.map((t, j) => (j === 50 ? t - 2 * MINUTE : t)) }] }] },
    ]
    for (const overrides of bad) assert.throws(() => runBacktest(input(bars, overrides)), RangeError, JSON.stringify(Object.keys(overrides)))
  })

  it('documents the exit rules for the API', () => {
    for (const phrase of ['exits.stop_loss', 'trailing_activation', 'stop_price', 'wrong side', 'exit_resolution', 'ambiguous_exits', 'nearness to the open', 'after that bar', 'NO_DATA', 'slippage_bps', 'stays flat until']) {
      assert.ok(ENGINE_SEMANTICS.includes(phrase), phrase)
    }
  })
})
