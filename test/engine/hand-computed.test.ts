import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { feeRates, runBacktest } from '../../src/engine/index.js'
import type { SymbolRules } from '../../src/engine/types.js'
import { BINANCE_BTCUSDT_BRACKETS } from '../../src/binance-formats/leverage-brackets.js'
import { barsFromRows, funding, HOUR } from './helpers.js'

const START = Date.UTC(2024, 0, 1)
const RULES: SymbolRules = { stepSize: 0.001, minQty: 0.001, minNotional: 10, tickSize: 0.1, brackets: BINANCE_BTCUSDT_BRACKETS }

// [open, high, low, close]; opens differ from the previous close so a fill at the close would show.
const ROWS = [
  [100, 100.5, 99.5, 100], // 0
  [100, 100.2, 98.8, 99], // 1
  [99, 99.1, 97.9, 98], // 2  SMA2 98.5 < SMA3 99: first defined difference, negative, no cross
  [98, 101.5, 97.8, 101], // 3  SMA2 99.5 > SMA3 99.333: cross up at this close
  [102, 105, 101.5, 104], // 4  buy at this open, 102
  [104, 104.5, 102.9, 103], // 5  SMA2 103.5 > SMA3 102.667
  [103, 103.2, 99.8, 100], // 6  SMA2 101.5 < SMA3 102.333: cross down at this close
  [99.5, 100, 98, 99], // 7  sell (or reverse) at this open, 99.5
  [99, 99.5, 98.5, 99.2], // 8  last bar
]
const BARS = barsFromRows('BTCUSDT', START, HOUR, ROWS)
const FUNDING = funding([
  { time: START + 2 * HOUR, rate: 0.0005 }, // bar 2, flat: nothing to pay
  { time: START + 5 * HOUR + 1, rate: 0.0001, mark: 103.7 }, // bar 5: the recorded mark, not the open (104)
  { time: START + 6 * HOUR, rate: -0.0002 }, // bar 6: no mark recorded, so bar 6's open (103)
])

function run(allowShort: boolean) {
  return runBacktest({
    templateId: 'sma_cross',
    params: { fast: 2, slow: 3, allow_short: allowShort },
    bars: [BARS],
    funding: [FUNDING],
    rules: [RULES],
    capital: 1000,
    leverage: 1,
    fees: feeRates('fixed_bps', 10),
    start: START,
    end: START + 8 * HOUR,
  })
}

const close = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`)

describe('a hand-computed sma_cross 2/3 run (10 bps per fill, funding at bars 2, 5 and 6)', () => {
  it('long only: buys at bar 4 open, pays and receives funding, sells at bar 7 open', () => {
    const result = run(false)
    // Bar 4 open 102, equity = cash = 1000: qty = floor_0.001(1000 × 1 × 1 / (102 × 1.001)) = floor(9.794127…) = 9.794.
    // Entry fee 9.794 × 102 × 0.001 = 0.998988 → cash 999.001012.
    // Bar 5 funding: 9.794 × 103.7 × 0.0001 = 0.10156378 paid → cash 998.89944822.
    // Bar 6 funding: 9.794 × 103 × −0.0002 = −0.2017564, received → cash 999.10120462.
    // Bar 7 open 99.5: realized 9.794 × (99.5 − 102) = −24.485; exit fee 9.794 × 99.5 × 0.001 = 0.974503 → cash 973.64170162.
    assert.equal(result.trades.length, 1)
    const [trade] = result.trades
    assert.equal(trade!.id, 1)
    assert.equal(trade!.side, 'buy')
    assert.equal(trade!.symbol, 'BTCUSDT')
    assert.equal(trade!.entryTime, START + 4 * HOUR)
    assert.equal(trade!.entryPrice, 102)
    assert.equal(trade!.exitTime, START + 7 * HOUR)
    assert.equal(trade!.exitPrice, 99.5)
    assert.equal(trade!.qty, 9.794)
    assert.equal(trade!.exitReason, 'signal')
    close(trade!.fee, 0.998988 + 0.974503, 'fee')
    close(trade!.funding, 0.10156378 - 0.2017564, 'funding')
    close(trade!.pnl, -24.485 - 1.973491 + 0.10019262, 'pnl')
    close(result.finalEquity, 973.64170162, 'final equity')
    close(result.feesPaid, 1.973491, 'fees paid')
    close(result.fundingPaid, -0.10019262, 'funding paid')
    assert.deepEqual(result.openPositions, [])
    assert.deepEqual(result.gaps, [])
    assert.equal(result.barsProcessed, 9)
    // One UTC day: the capital at start, then the end of the last bar (09:00).
    assert.equal(result.equityCurve.length, 2)
    assert.deepEqual(result.equityCurve[0], [START, 1000])
    assert.equal(result.equityCurve[1]![0], START + 9 * HOUR)
    close(result.equityCurve[1]![1], 973.64170162, 'last curve point')
  })

  it('long only: metrics of that run', () => {
    const { metrics } = run(false)
    const drawdown = 973.64170162 / 1000 - 1
    close(metrics.maxDrawdown, drawdown, 'max drawdown')
    // One daily return: sharpe and sortino need two.
    assert.equal(metrics.sharpe, null)
    assert.equal(metrics.sortino, null)
    // 9 hours = 0.375 days: (0.97364170162)^(365 / 0.375) − 1.
    const cagr = 0.97364170162 ** (365 / 0.375) - 1
    close(metrics.cagr!, cagr, 'cagr')
    close(metrics.calmar!, cagr / Math.abs(drawdown), 'calmar')
    assert.equal(metrics.totalTrades, 1)
    assert.equal(metrics.winRate, 0)
    assert.equal(metrics.profitFactor, 0, 'gross profit 0 over a gross loss: defined, 0')
    close(metrics.expectedValue!, -26.35829838, 'expected value')
    assert.equal(metrics.avgTradeDurationSeconds, 3 * 3600)
  })

  it('allow_short: reverses at bar 7 and reports the short as open, marked at the last close', () => {
    const result = run(true)
    assert.equal(result.trades.length, 1)
    // The long closes first (cash 973.64170162, as above); the short is sized on that cash:
    // qty = floor_0.001(973.64170162 / (99.5 × 1.001)) = floor(9.77557…) = 9.775; entry fee 9.775 × 99.5 × 0.001 = 0.9726125.
    // Cash 973.64170162 − 0.9726125 = 972.66908912; the short marked at 99.2: +9.775 × 0.3 = 2.9325.
    const [position] = result.openPositions
    assert.ok(position)
    assert.equal(position.side, 'sell')
    assert.equal(position.qty, 9.775)
    assert.equal(position.entryPrice, 99.5)
    assert.equal(position.entryTime, START + 7 * HOUR)
    assert.equal(position.markPrice, 99.2)
    close(position.unrealizedPnl, 2.9325, 'unrealized')
    close(position.fee, 0.9726125, 'open fee')
    assert.equal(position.funding, 0)
    // Isolated short at 1×: LP = (972.6125 + 0 + 9.775 × 99.5) / (9.775 × 0.004 + 9.775) = 198.2072… → 198.2 (floored).
    assert.equal(position.liquidationPrice, 198.2)
    close(result.finalEquity, 972.66908912 + 2.9325, 'final equity')
    // Open positions are not trades: metrics count the one closed long.
    assert.equal(result.metrics.totalTrades, 1)
  })
})
