import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { feeRates } from '../../src/engine/fees.js'
import { runBacktest } from '../../src/engine/index.js'
import { Ledger } from '../../src/engine/ledger.js'
import { findGaps } from '../../src/engine/range.js'
import { simulateSingle } from '../../src/engine/simulate.js'
import type { BarSeries, SymbolRules } from '../../src/engine/types.js'
import { TEMPLATES } from '../../src/templates/registry.js'
import { BTCUSDT_RULES, DAY, HOUR, ScheduleSignal, assertConserved, assertCurveShape, isStepMultiple, near, random, randomBars } from './helpers.js'

const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8]
const START = Date.UTC(2024, 0, 1)

describe('ledger: every fill and funding payment conserves cash + position value', () => {
  for (const seed of SEEDS) {
    it(`random fills, funding and liquidations (seed ${seed})`, () => {
      const next = random(seed)
      const rules: SymbolRules = { ...BTCUSDT_RULES, minNotional: 5 }
      const ledger = new Ledger(['BTCUSDT'], [rules], 10_000, 1 + Math.floor(next() * 20), 0.0005)
      let price = 30_000
      for (let step = 0; step < 400; step++) {
        price = Math.max(100, Math.round(price * (1 + (next() - 0.5) * 0.05) * 10) / 10)
        const equity = () => ledger.cash + ledger.unrealized(0, price)
        const before = equity()
        const feesBefore = ledger.feesPaid
        const fundingBefore = ledger.fundingPaid
        const action = next()
        if (action < 0.6) {
          const fraction = Math.round((next() * 2 - 1) * 4) / 4
          ledger.moveTo(0, ledger.targetQty(0, fraction, before, price), price, step)
        } else if (action < 0.9) {
          ledger.settleFunding(0, (next() - 0.4) * 0.002, price)
        } else if (ledger.qty[0] !== 0 && ledger.liq[0]! > 0) {
          price = ledger.liq[0]!
          const atLiquidation = ledger.cash + ledger.unrealized(0, price)
          ledger.liquidate(0, step)
          near(equity(), atLiquidation - (ledger.feesPaid - feesBefore), `step ${step}: liquidation`, 10_000)
          continue
        }
        const paid = ledger.feesPaid - feesBefore + (ledger.fundingPaid - fundingBefore)
        near(equity(), before - paid, `step ${step}: equity after ${action < 0.6 ? 'a fill' : 'funding'}`, 10_000)
        assert.ok(isStepMultiple(Math.abs(ledger.qty[0]!), rules.stepSize), `step ${step}: qty ${ledger.qty[0]} on the step`)
      }
      for (const trade of ledger.trades) assert.ok(isStepMultiple(trade.qty, rules.stepSize), `trade qty ${trade.qty}`)
    })
  }
})

describe('bar loop: fills only after their signal, at the next open', () => {
  for (const seed of SEEDS) {
    it(`random targets over a random walk (seed ${seed})`, () => {
      const next = random(seed * 31)
      const bars = randomBars('BTCUSDT', seed, 600, START, HOUR)
      // All-in targets that change at every emission, so each fill opens, closes or reverses a whole position
      // and a trade's prices are single fills (resizes are the ledger test's business).
      const schedule = new Map<number, number>()
      let last = 0
      for (let i = 0; i < 600; i++) {
        if (next() >= 0.05) continue
        const choices = [1, -1, 0].filter((x) => x !== last)
        last = choices[Math.floor(next() * choices.length)]!
        schedule.set(i, last)
      }
      const signal = new ScheduleSignal(schedule)
      const { ledger } = simulateSingle(
        {
          bars: [bars],
          funding: [{ time: new Float64Array(0), rate: new Float64Array(0), markPrice: new Float64Array(0) }],
          rules: [BTCUSDT_RULES],
          capital: 10_000,
          leverage: 1 + (seed % 5),
          fees: feeRates('match_exchange'),
          start: START,
          end: bars.openTime[bars.openTime.length - 1]!,
        },
        signal,
      )
      assert.deepEqual(signal.calls, Array.from({ length: 600 }, (_, i) => i), 'each bar decided once, in order')
      const fillTimes = new Set([...schedule.keys()].map((i) => bars.openTime[i + 1]))
      const openAt = new Map([...bars.openTime].map((t, i) => [t, bars.open[i]!]))
      assert.ok(ledger.trades.length > 0)
      for (const trade of ledger.trades) {
        assert.ok(fillTimes.has(trade.entryTime), `trade ${trade.id} entered at ${trade.entryTime}, not the open after a signal`)
        assert.equal(trade.entryPrice, openAt.get(trade.entryTime), `trade ${trade.id} entry at that bar's open`)
        if (trade.exitReason === 'signal') {
          assert.ok(fillTimes.has(trade.exitTime), `trade ${trade.id} exited at ${trade.exitTime}, not the open after a signal`)
          assert.equal(trade.exitPrice, openAt.get(trade.exitTime))
        }
        assert.ok(trade.exitTime > trade.entryTime || trade.exitReason === 'liquidation')
        assert.ok(isStepMultiple(trade.qty, BTCUSDT_RULES.stepSize))
      }
    })
  }
})

describe('every template over random bars: conservation, curve shape, step-size quantities', () => {
  for (const template of TEMPLATES) {
    it(template.id, () => {
      for (const seed of SEEDS.slice(0, 4)) {
        const count = template.multiSymbol ? 3 : 1
        const bars: BarSeries[] = Array.from({ length: count }, (_, s) =>
          randomBars(['BTCUSDT', 'ETHUSDT', 'XRPUSDT'][s]!, seed * 10 + s, 1500, START, HOUR, 20_000 + 10_000 * s),
        )
        const next = random(seed)
        // Funding every 8 h with rates large enough to move funding_carry.
        const times = Array.from({ length: 190 }, (_, k) => START + k * 8 * HOUR + 1)
        const rates = times.map(() => (next() - 0.45) * 0.002)
        const events = { time: Float64Array.from(times), rate: Float64Array.from(rates), markPrice: new Float64Array(times.length).fill(Number.NaN) }
        const params: Record<string, unknown> = template.id === 'cross_sectional_momentum' ? { lookback: 24, rebalance_every: 12, long_count: 1, short_count: 1 } : {}
        if ('allow_short' in template.schema.properties) params.allow_short = seed % 2 === 0
        const capital = 5_000
        const result = runBacktest({
          templateId: template.id,
          params,
          bars,
          funding: bars.map(() => events),
          rules: bars.map(() => ({ ...BTCUSDT_RULES, minNotional: 5 })),
          capital,
          leverage: [1, 3, 10, 20][seed % 4]!,
          fees: feeRates('fixed_bps', 5),
          start: START,
          end: START + 1499 * HOUR,
        })
        const what = `${template.id} seed ${seed}`
        assertConserved(result, capital, what)
        assertCurveShape(result, START, capital, what)
        for (const trade of result.trades) assert.ok(isStepMultiple(trade.qty, 0.001), `${what}: trade qty ${trade.qty}`)
        for (const position of result.openPositions) assert.ok(isStepMultiple(position.qty, 0.001), `${what}: open qty ${position.qty}`)
        assert.ok(result.trades.length + result.openPositions.length > 0, `${what}: the template never traded`)
        assert.equal(result.barsProcessed, 1500 * count)
      }
    })
  }
})

describe('gaps', () => {
  it('missing bars are reported as runs of open times, leading and trailing ones included', () => {
    for (const seed of SEEDS) {
      const next = random(seed)
      const full = randomBars('BTCUSDT', seed, 300, START, HOUR)
      const keep = Array.from({ length: 300 }, () => next() > 0.1)
      const index = keep.flatMap((k, i) => (k ? [i] : []))
      const pick = (a: Float64Array) => Float64Array.from(index, (i) => a[i]!)
      const bars: BarSeries = { ...full, openTime: pick(full.openTime), open: pick(full.open), high: pick(full.high), low: pick(full.low), close: pick(full.close), volume: pick(full.volume) }
      const expected: { symbol: string; from: number; to: number }[] = []
      for (let i = 0; i < 300; i++) {
        if (keep[i]) continue
        const t = START + i * HOUR
        const last = expected[expected.length - 1]
        if (last && last.to === t - HOUR) last.to = t
        else expected.push({ symbol: 'BTCUSDT', from: t, to: t })
      }
      assert.deepEqual(findGaps(bars, START, START + 299 * HOUR), expected)
    }
  })

  it('a single-symbol backtest finds them in its bar loop: the same runs as findGaps, whatever the range', () => {
    for (const seed of SEEDS) {
      const next = random(seed)
      const full = randomBars('BTCUSDT', seed, 400, START, HOUR)
      const index = Array.from({ length: 400 }, (_, i) => i).filter((i) => next() > (i % 50 < 10 ? 0.6 : 0.05))
      const pick = (a: Float64Array) => Float64Array.from(index, (i) => a[i]!)
      const bars: BarSeries = { ...full, openTime: pick(full.openTime), open: pick(full.open), high: pick(full.high), low: pick(full.low), close: pick(full.close), volume: pick(full.volume) }
      // Bounds off the grid and beyond the bars on either side.
      const start = START - Math.floor(next() * 5) * HOUR + Math.floor(next() * HOUR)
      const end = START + 399 * HOUR + Math.floor(next() * 5 * HOUR)
      const result = runBacktest({ templateId: 'sma_cross', params: {}, bars: [bars], rules: [BTCUSDT_RULES], capital: 10_000, leverage: 1, fees: feeRates('none'), start, end })
      const expected = findGaps(bars, start, end)
      assert.ok(expected.length > 10, `seed ${seed}: ${expected.length} gaps`)
      assert.deepEqual(result.gaps, expected, `seed ${seed}`)
    }
  })

  it('a bad open time anywhere wins over a corrupt price before it, as when the grid was checked before the loop', () => {
    const bars = randomBars('BTCUSDT', 2, 300, START, HOUR)
    bars.close[10] = 0
    bars.openTime[250] = bars.openTime[249]!
    const input = { templateId: 'sma_cross', params: {}, bars: [bars], rules: [BTCUSDT_RULES], capital: 10_000, leverage: 1, fees: feeRates('none'), start: START, end: START + 299 * HOUR }
    assert.throws(() => runBacktest(input), /bar open times must ascend on the 3600000 ms grid \(bar 250 at/)
    bars.openTime[250] = START + 250 * HOUR
    assert.throws(() => runBacktest(input), /has a missing or non-positive open or close/)
  })

  it('fails fast on unsorted or off-grid bars', () => {
    const bars = randomBars('BTCUSDT', 1, 5, START, HOUR)
    const shuffled = { ...bars, openTime: Float64Array.from([START, START + 2 * HOUR, START + HOUR, START + 3 * HOUR, START + 4 * HOUR]) }
    assert.throws(() => findGaps(shuffled, START, START + 4 * HOUR), RangeError)
    const offGrid = { ...bars, openTime: bars.openTime.map((t) => t + 1) }
    assert.throws(() => findGaps(offGrid, START, START + 5 * HOUR), RangeError)
    for (const series of [shuffled, offGrid]) {
      const input = { templateId: 'sma_cross', params: {}, bars: [series], rules: [BTCUSDT_RULES], capital: 10_000, leverage: 1, fees: feeRates('none'), start: START, end: START + 5 * HOUR }
      assert.throws(() => runBacktest(input), /bar open times must ascend/)
    }
  })

  it('no fills inside a gap; a funding event inside a gap settles at the first bar after it', () => {
    const full = randomBars('BTCUSDT', 3, 10, START, HOUR, 100)
    const index = [0, 1, 2, 3, 7, 8, 9] // bars 4–6 missing
    const pick = (a: Float64Array) => Float64Array.from(index, (i) => a[i]!)
    const bars: BarSeries = { ...full, openTime: pick(full.openTime), open: pick(full.open), high: pick(full.high), low: pick(full.low), close: pick(full.close), volume: pick(full.volume) }
    const events = { time: Float64Array.from([START + 5 * HOUR]), rate: Float64Array.from([0.001]), markPrice: Float64Array.from([Number.NaN]) }
    // Long from bar 1's open, closed by a decision at series index 3 (bar 3): filled at the next bar there is, bar 7.
    const { ledger } = simulateSingle(
      { bars: [bars], funding: [events], rules: [{ ...BTCUSDT_RULES, minNotional: 0 }], capital: 1000, leverage: 1, fees: feeRates('none'), start: START, end: START + 9 * HOUR },
      new ScheduleSignal(new Map([[0, 1], [3, 0]])),
    )
    const [trade] = ledger.trades
    assert.equal(trade!.exitTime, START + 7 * HOUR)
    assert.equal(trade!.exitPrice, full.open[7])
    // The 05:00 event settled at bar 7's open (no recorded mark: that open), before the exit fill.
    near(trade!.funding, trade!.qty * full.open[7]! * 0.001, 'funding settled after the gap')
  })
})
