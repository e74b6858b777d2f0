import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DailyCurve } from '../../src/engine/daily-curve.js'
import { feeRates, runBacktest } from '../../src/engine/index.js'
import { Ledger } from '../../src/engine/ledger.js'
import { barsInRange, fundingInRange } from '../../src/engine/range.js'
import { SingleSymbolStepper } from '../../src/engine/single-stepper.js'
import type { BarSeries } from '../../src/engine/types.js'
import { findTemplate } from '../../src/templates/registry.js'
import type { SingleSymbolTemplate } from '../../src/templates/types.js'
import { BTCUSDT_RULES, HOUR, loadFunding, loadKlines, validParams } from './helpers.js'

const START = Date.UTC(2022, 0, 1)
const END = Date.UTC(2022, 11, 31, 23)

describe('SingleSymbolStepper', () => {
  it('bar by bar, over a series that grows as bars arrive, gives the backtest exactly (trades, fees, funding, equity)', () => {
    const all = barsInRange(loadKlines('BTCUSDT', 'BTCUSDT-1h-20190908-20260517.csv.gz', HOUR), START, END)
    const funding = fundingInRange(loadFunding('BTCUSDT-fundingRate-20190910-20260517.csv'), START, END + HOUR)
    const params = { fast: 10, slow: 30, allow_short: true }
    const fees = feeRates('match_exchange')
    const expected = runBacktest({ templateId: 'sma_cross', params, bars: [all], funding: [funding], rules: [BTCUSDT_RULES], capital: 10_000, leverage: 3, fees, start: START, end: END })
    assert.ok(expected.trades.length > 20, 'the year trades often enough to compare')

    // A runner's view: the series holds only the bars closed so far, swapped for a longer copy on each bar.
    const growing: BarSeries = { ...all, openTime: all.openTime.slice(0, 0), open: all.open.slice(0, 0), high: all.high.slice(0, 0), low: all.low.slice(0, 0), close: all.close.slice(0, 0), volume: all.volume.slice(0, 0) }
    const template = findTemplate('sma_cross') as SingleSymbolTemplate
    const signal = template.create({ bars: [growing], funding: [funding], rules: [BTCUSDT_RULES] }, validParams('sma_cross', params) as never)
    const ledger = new Ledger(['BTCUSDT'], [BTCUSDT_RULES], 10_000, 3, fees.takerRate)
    const stepper = new SingleSymbolStepper(ledger, new DailyCurve(START, 10_000), growing, funding, signal)
    const n = all.openTime.length
    for (let i = 0; i < n; i++) {
      for (const key of ['openTime', 'open', 'high', 'low', 'close', 'volume'] as const) growing[key] = all[key].subarray(0, i + 1)
      stepper.run(i, i + 1)
    }
    assert.deepEqual(ledger.trades, expected.trades)
    assert.equal(ledger.feesPaid, expected.feesPaid)
    assert.equal(ledger.fundingPaid, expected.fundingPaid)
    assert.equal(ledger.cash + ledger.unrealized(0, all.close[n - 1]!), expected.finalEquity)
  })

  it('a backtest (targets asked for a run of bars, quiet bars skipped through) equals stepping bar by bar, with liquidations, gaps and funding', () => {
    const full = barsInRange(loadKlines('BTCUSDT', 'BTCUSDT-1h-20190908-20260517.csv.gz', HOUR), START, END)
    // Every 300th bar starts a run of 4 missing bars; wicks of ±12 % every 97 bars liquidate 20× positions
    // inside bars, opens 7 % down every 89 bars liquidate longs at the open. The capital is large enough that
    // the leverage tiers cap the position and a liquidation leaves equity to trade on.
    const index = Array.from(full.openTime, (_, i) => i).filter((i) => i % 300 >= 4)
    const pick = (a: Float64Array, wick = 1, drop = 1) => Float64Array.from(index, (i) => a[i]! * (i % 97 === 5 ? wick : 1) * (i % 89 === 7 ? drop : 1))
    const all: BarSeries = { ...full, openTime: pick(full.openTime), open: pick(full.open, 1, 0.93), high: pick(full.high, 1.12), low: pick(full.low, 0.88, 0.93), close: pick(full.close), volume: pick(full.volume) }
    const funding = fundingInRange(loadFunding('BTCUSDT-fundingRate-20190910-20260517.csv'), START, END + HOUR)
    const params = { fast: 5, slow: 20, allow_short: true }
    const fees = feeRates('match_exchange')
    const expected = runBacktest({ templateId: 'sma_cross', params, bars: [all], funding: [funding], rules: [BTCUSDT_RULES], capital: 100_000_000, leverage: 20, fees, start: START, end: END })
    const liquidations = expected.trades.filter((t) => t.exitReason === 'liquidation')
    assert.ok(liquidations.filter((t) => t.exitTime % HOUR === 0).length > 3, 'liquidations at the open to compare')
    assert.ok(liquidations.filter((t) => t.exitTime % HOUR !== 0).length > 3, 'liquidations inside bars to compare')
    assert.ok(expected.gaps.length > 20, 'gaps to compare')

    const template = findTemplate('sma_cross') as SingleSymbolTemplate
    const signal = template.create({ bars: [all], funding: [funding], rules: [BTCUSDT_RULES] }, validParams('sma_cross', params) as never)
    const ledger = new Ledger(['BTCUSDT'], [BTCUSDT_RULES], 100_000_000, 20, fees.takerRate)
    const stepper = new SingleSymbolStepper(ledger, new DailyCurve(START, 100_000_000), all, funding, signal)
    const n = all.openTime.length
    for (let i = 0; i < n; i++) stepper.run(i, i + 1)
    assert.deepEqual(ledger.trades, expected.trades)
    assert.equal(ledger.feesPaid, expected.feesPaid)
    assert.equal(ledger.fundingPaid, expected.fundingPaid)
    assert.equal(ledger.cash + ledger.unrealized(0, all.close[n - 1]!), expected.finalEquity)
  })
})
