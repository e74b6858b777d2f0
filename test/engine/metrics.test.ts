import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  cagr,
  calmarRatio,
  computeMetrics,
  downsideRisk,
  maxDrawdown,
  sharpeRatio,
  simpleReturns,
  sortinoRatio,
} from '../../src/engine/metrics.js'
import type { Trade } from '../../src/engine/types.js'

/*
 * Test vectors from quantopian/empyrical, empyrical/tests/test_stats.py (class TestStats, the 0.5.x
 * series: test_sharpe_ratio, test_downside_risk, test_sortino, test_max_drawdown, test_annual_ret,
 * test_calmar). empyrical annualises daily data with 252 periods (DAILY), weekly with 52, monthly with
 * 12; our functions take the period count, and the engine passes 365 (DESIGN §5).
 * empyrical drops the leading NaN of mixed_returns in sharpe/sortino and treats it as a 0 return in
 * cumulative measures (cum_returns fills NaN with 0); the fixtures below do the same explicitly.
 */
const pct = (xs: number[]) => xs.map((x) => x / 100)
const mixed = pct([1, 10, -4, 2, 3, 2, 1, -10]) // mixed_returns without its leading NaN
const mixedWithZero = pct([0, 1, 10, -4, 2, 3, 2, 1, -10]) // mixed_returns with the NaN as 0 (cum_returns)
const positive = pct([1, 2, 1, 1, 1, 1, 1, 1, 1])
const negative = pct([0, -6, -7, -1, -9, -2, -6, -8, -5])
const allNegative = pct([-2, -6, -7, -1, -9, -2, -6, -8, -5])
const simpleBenchmark = pct([0, 1, 0, 1, 0, 1, 0, 1, 0])
const weekly = pct([0, 1, 10, -4, 2, 3, 2, 1, -10])
const DAILY = 252
const WEEKLY = 52
const MONTHLY = 12

/** empyrical's assert_almost_equal(…, DECIMAL_PLACES = 8). */
function almost(actual: number | null, expected: number, what: string) {
  assert.ok(actual !== null, `${what} is null`)
  assert.ok(Math.abs(actual - expected) < 1.5e-8, `${what}: ${actual} ≠ ${expected}`)
}

/** An equity curve from returns, starting at 100 (empyrical cum_returns(starting_value=100) with the start prepended). */
function curve(returns: number[]): number[] {
  const values = [100]
  for (const r of returns) values.push(values[values.length - 1]! * (1 + r))
  return values
}

describe('metrics against empyrical test vectors', () => {
  it('sharpe_ratio (risk_free 0, DAILY)', () => {
    almost(sharpeRatio(mixed, DAILY), 1.7238613961706866, 'mixed_returns')
    almost(sharpeRatio(positive, DAILY), 52.915026221291804, 'positive_returns')
    almost(sharpeRatio(negative, DAILY), -24.406808633910085, 'negative_returns')
    // empyrical: nan for empty and one_return; we say null.
    assert.equal(sharpeRatio([], DAILY), null)
    assert.equal(sharpeRatio([0.01], DAILY), null)
  })

  it('downside_risk (required_return 0)', () => {
    almost(downsideRisk(mixed, DAILY), 0.60448325038829653, 'mixed_returns DAILY')
    almost(downsideRisk(weekly, WEEKLY), 0.25888650451930134, 'weekly_returns WEEKLY')
    almost(downsideRisk(weekly, MONTHLY), 0.1243650540411842, 'monthly_returns MONTHLY')
    almost(downsideRisk([0.01], DAILY), 0, 'one_return')
  })

  it('sortino_ratio (required_return 0)', () => {
    almost(sortinoRatio(mixed, DAILY), 2.605531251673693, 'mixed_returns DAILY')
    almost(sortinoRatio(negative, DAILY), -13.532743075043401, 'negative_returns DAILY')
    almost(sortinoRatio(weekly, WEEKLY), 1.1158901056866439, 'weekly_returns WEEKLY')
    almost(sortinoRatio(weekly, MONTHLY), 0.53605626741889756, 'monthly_returns MONTHLY')
    // empyrical: inf for positive_returns and simple_benchmark (no downside); nan for one_return. We say null.
    assert.equal(sortinoRatio(positive, DAILY), null)
    assert.equal(sortinoRatio(simpleBenchmark, DAILY), null)
    assert.equal(sortinoRatio([0.01], DAILY), null)
  })

  it('max_drawdown', () => {
    almost(maxDrawdown(curve(mixedWithZero)), -0.1, 'mixed_returns')
    almost(maxDrawdown(curve(simpleBenchmark)), 0, 'simple_benchmark')
    almost(maxDrawdown(curve(positive)), 0, 'positive_returns')
    almost(maxDrawdown(curve([0.01])), 0, 'one_return')
    // "negative returns means the drawdown is just the returns": cum_returns_final.
    almost(maxDrawdown(curve(negative)), -0.36590730349873601, 'negative_returns')
    const final = allNegative.reduce((product, r) => product * (1 + r), 1) - 1
    almost(maxDrawdown(curve(allNegative)), final, 'all_negative_returns')
    almost(maxDrawdown(curve(pct([10, -10, 10]))), -0.1, '[10, -10, 10] %')
  })

  it('annual_return (our cagr over calendar days) and calmar_ratio', () => {
    // annual_return(mixed_returns, DAILY): 9 periods (the NaN counts as a 0 return) of 1/252 year each.
    const values = curve(mixedWithZero)
    const growth = cagr(values[0]!, values[values.length - 1]!, 9, DAILY)
    almost(growth, 1.9135925373194231, 'annual_return mixed_returns DAILY')
    almost(calmarRatio(growth, maxDrawdown(values)), 19.135925373194233, 'calmar mixed_returns DAILY')
    const weeklyValues = curve(weekly)
    const weeklyGrowth = cagr(weeklyValues[0]!, weeklyValues[weeklyValues.length - 1]!, 9, WEEKLY)
    almost(weeklyGrowth, 0.24690830513998208, 'annual_return weekly_returns WEEKLY')
    almost(calmarRatio(weeklyGrowth, maxDrawdown(weeklyValues)), 2.4690830513998208, 'calmar weekly_returns WEEKLY')
    almost(cagr(weeklyValues[0]!, weeklyValues[weeklyValues.length - 1]!, 9, MONTHLY), 0.052242061386048144, 'annual_return monthly_returns')
    // empyrical: calmar is nan without a drawdown; we say null.
    assert.equal(calmarRatio(0.5, 0), null)
  })

  it('simpleReturns reproduces the returns a curve was built from', () => {
    const back = simpleReturns(curve(mixed))
    mixed.forEach((r, k) => almost(back[k]!, r, `return ${k}`))
  })
})

describe('computeMetrics', () => {
  const DAY = 86_400_000
  const trade = (pnl: number, hours: number): Trade => ({
    id: 1,
    symbol: 'BTCUSDT',
    side: 'buy',
    entryTime: 0,
    entryPrice: 1,
    exitTime: hours * 3_600_000,
    exitPrice: 1,
    qty: 1,
    fee: 0,
    funding: 0,
    pnl,
    exitReason: 'signal',
  })

  it('a constant curve without trades: defined where defined, null elsewhere, never a sentinel', () => {
    const times = [0, DAY, 2 * DAY, 3 * DAY]
    const m = computeMetrics(times, [1000, 1000, 1000, 1000], [])
    assert.deepEqual(m, {
      sharpe: null,
      sortino: null,
      calmar: null,
      maxDrawdown: 0,
      winRate: null,
      profitFactor: null,
      cagr: 0,
      expectedValue: null,
      totalTrades: 0,
      avgTradeDurationSeconds: null,
    })
  })

  it('a single point (no bars at all): everything but the drawdown undefined', () => {
    const m = computeMetrics([0], [1000], [])
    assert.equal(m.maxDrawdown, 0)
    assert.equal(m.cagr, null)
    assert.equal(m.sharpe, null)
  })

  it('trade statistics over closed trades net of fees and funding', () => {
    const m = computeMetrics([0, DAY], [1000, 1010], [trade(30, 2), trade(-10, 4), trade(0, 6), trade(-5, 12)])
    assert.equal(m.totalTrades, 4)
    assert.equal(m.winRate, 0.25)
    assert.equal(m.profitFactor, 2)
    assert.equal(m.expectedValue, 15 / 4)
    assert.equal(m.avgTradeDurationSeconds, 6 * 3600)
    // Only winners: no gross loss, profit factor undefined.
    assert.equal(computeMetrics([0, DAY], [1000, 1010], [trade(5, 1)]).profitFactor, null)
  })

  it('annualises with 365 days and counts calendar days', () => {
    // 1000 → 1100 over 730 days: 10 % over two years.
    const m = computeMetrics([0, 730 * DAY], [1000, 1100], [])
    assert.ok(Math.abs(m.cagr! - (1.1 ** 0.5 - 1)) < 1e-12)
    // Daily returns of +1 %, −0.5 % alternating: sharpe = mean / std(ddof 1) × √365.
    const values = [100]
    for (let k = 0; k < 10; k++) values.push(values[k]! * (k % 2 === 0 ? 1.01 : 0.995))
    const returns = simpleReturns(values)
    const mean = returns.reduce((a, b) => a + b, 0) / returns.length
    const std = Math.sqrt(returns.reduce((a, r) => a + (r - mean) ** 2, 0) / (returns.length - 1))
    const metrics = computeMetrics(values.map((_, k) => k * DAY), values, [])
    assert.ok(Math.abs(metrics.sharpe! - (mean / std) * Math.sqrt(365)) < 1e-9)
  })
})
