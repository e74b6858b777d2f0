import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { runBacktest } from '../../src/engine/index.js'
import type { BarSeries } from '../../src/engine/types.js'
import { MultiPaperBroker, type StepOutcome } from '../../src/live/brokers/multi-paper-broker.js'
import type { ClosedBar } from '../../src/live/brokers/broker.js'
import type { Step } from '../../src/live/runner/step-assembly.js'
import { crossSectionalMomentum } from '../../src/templates/cross-sectional-momentum.js'
import { BTCUSDT_RULES, funding, HOUR, randomBars } from '../engine/helpers.js'

const START = Date.UTC(2024, 0, 1)
const PARAMS = { lookback: 3, rebalance_every: 2, long_count: 1, short_count: 1 }
const FEES = { makerRate: 0.0002, takerRate: 0.0005 }

/** Drops bars k of a series (a symbol without a bar at some steps: partial steps). */
function without(series: BarSeries, drop: ReadonlySet<number>): BarSeries {
  const keep = [...series.openTime.keys()].filter((k) => !drop.has(k))
  const pick = (a: Float64Array) => Float64Array.from(keep, (k) => a[k]!)
  return { ...series, openTime: pick(series.openTime), open: pick(series.open), high: pick(series.high), low: pick(series.low), close: pick(series.close), volume: pick(series.volume) }
}

/** The union of the series' open times as steps, each symbol's bar or undefined. */
function stepsOf(bars: readonly BarSeries[]): Step[] {
  const times = [...new Set(bars.flatMap((b) => [...b.openTime]))].sort((a, b) => a - b)
  return times.map((t) => ({
    openTime: t,
    bars: bars.map((b): ClosedBar | undefined => {
      const i = b.openTime.indexOf(t)
      return i < 0 ? undefined : { openTime: t, open: b.open[i]!, high: b.high[i]!, low: b.low[i]!, close: b.close[i]!, volume: b.volume[i]! }
    }),
  }))
}

describe('the many-symbol paper broker', () => {
  it('stepped one step at a time, with partial steps, funding and a liquidation, ends where simulateMulti ends, fill for fill', () => {
    const a = randomBars('AAAUSDT', 7, 300, START, HOUR, 30_000)
    // B misses some bars (its orders wait for its next bar) and lurches once, far enough to liquidate 10x.
    const b0 = randomBars('BBBUSDT', 11, 300, START, HOUR, 2_000)
    for (const k of [150, 151]) {
      b0.open[k] = b0.open[k]! * (k === 150 ? 1 : 0.8)
      b0.low[k] = b0.open[k]! * 0.75
      b0.high[k] = b0.open[k]! * 1.25
    }
    const b = without(b0, new Set([20, 21, 22, 90, 200]))
    const rates = funding(Array.from({ length: 36 }, (_, k) => ({ time: START + 8 * HOUR * (k + 1), rate: 0.0001 * (k % 5) - 0.0002 })))
    const expected = runBacktest({
      templateId: 'cross_sectional_momentum',
      params: PARAMS,
      bars: [a, b],
      funding: [rates, rates],
      rules: [BTCUSDT_RULES, BTCUSDT_RULES],
      capital: 10_000,
      leverage: 10,
      fees: FEES,
      start: START,
      end: START + 299 * HOUR,
    })
    assert.ok(expected.trades.some((t) => t.exitReason === 'liquidation'), 'the case liquidates')

    const broker = new MultiPaperBroker({ template: crossSectionalMomentum, params: { ...PARAMS }, symbols: ['AAAUSDT', 'BBBUSDT'], intervalMs: HOUR, rules: [BTCUSDT_RULES, BTCUSDT_RULES], capital: 10_000, leverage: 10, fees: FEES })
    const events = Array.from(rates.time, (time, k) => ({ time, rate: rates.rate[k]!, markPrice: Number.NaN }))
    const outcomes: StepOutcome[] = []
    stepsOf([a, b]).forEach((step, k) => {
      // Funding arrives as a run reads it (a few events at a time), never before it is known to the step.
      const known = events.filter((e) => e.time < step.openTime + HOUR && (k === 0 || e.time >= step.openTime))
      outcomes.push(broker.onStep(step, [known, known]))
    })
    assert.deepEqual(broker.ledger.trades, expected.trades)
    assert.equal(broker.ledger.cash + broker.ledger.unrealized(0, a.close[a.close.length - 1]!) + broker.ledger.unrealized(1, b.close[b.close.length - 1]!), expected.finalEquity)
    assert.equal(broker.ledger.fundingPaid, expected.fundingPaid)

    // Each symbol's part: its liquidation fills apart from its order's.
    const liquidated = outcomes.flatMap((o) => o.symbols).filter((s) => s.liquidations.length > 0)
    assert.ok(liquidated.length >= 1)
    for (const part of liquidated) assert.ok(part.trades.some((t) => t.exitReason === 'liquidation' && t.exitPrice === part.liquidations[0]!.price))
  })

  it('live: the targets leave the stepper, sized on one equity at the closes; every leg it sizes is one the ledger books when the exchange fills it', () => {
    const a = randomBars('AAAUSDT', 5, 200, START, HOUR, 30_000)
    const b = randomBars('BBBUSDT', 9, 200, START, HOUR, 2_000)
    const broker = new MultiPaperBroker({ template: crossSectionalMomentum, params: { ...PARAMS }, symbols: ['AAAUSDT', 'BBBUSDT'], intervalMs: HOUR, rules: [BTCUSDT_RULES, BTCUSDT_RULES], capital: 1_000, leverage: 2, fees: FEES })
    let sent = 0
    let skippedLegs = 0
    for (const step of stepsOf([a, b])) {
      const outcome = broker.onStep(step, [[], []])
      assert.ok(outcome.symbols.every((o) => o.filledIntent === undefined), 'the stepper fills nothing: the targets were taken out')
      const targets = broker.takeIntents()
      const desired = broker.desiredQtys(targets, step.openTime + HOUR)
      targets.forEach((target, s) => {
        if (target !== target) return assert.equal(desired[s], broker.ledger.qty[s], 'a symbol without a target stays as it is')
        // The engine's size for this target on the step's equity, before the ledger's minimum-notional rule.
        const equity = broker.ledger.cash + [0, 1].reduce((sum, k) => sum + (broker.ledger.qty[k] ? broker.ledger.unrealized(k, broker.lastClose[k]!) : 0), 0)
        if (broker.ledger.targetQty(s, target, equity, broker.lastClose[s]!) !== desired[s]) skippedLegs++
      })
      // The exchange fills each leg at the close: the ledger must hold exactly what was sent (else the run and the exchange part).
      targets.forEach((target, s) => {
        if (target !== target || desired[s] === broker.ledger.qty[s]) return
        broker.fillAt(s, desired[s]!, broker.lastClose[s]!, step.openTime + HOUR)
        assert.equal(broker.ledger.qty[s], desired[s], `step ${step.openTime}: symbol ${s} booked as sent`)
        sent++
      })
    }
    assert.ok(sent >= 20, `${sent} legs sent`)
    assert.ok(skippedLegs >= 1, 'a resize below the minimum notional came up, and was not sent')
  })
})
