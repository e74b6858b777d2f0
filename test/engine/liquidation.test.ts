import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { feeRates } from '../../src/engine/fees.js'
import { BINANCE_BTCUSDT_BRACKETS } from '../../src/binance-formats/leverage-brackets.js'
import { liquidationPrice, maintenanceMargin } from '../../src/binance-formats/margin.js'
import { simulateSingle, type SimulationSetup } from '../../src/engine/simulate.js'
import type { BarSeries, FundingSeries } from '../../src/engine/types.js'
import { BTCUSDT_RULES, HOUR, NO_FUNDING, ScheduleSignal, barsFromRows, funding, random } from './helpers.js'

const START = Date.UTC(2024, 2, 1)
const close = (actual: number, expected: number, what: string, tolerance = 1e-9) =>
  assert.ok(Math.abs(actual - expected) <= tolerance, `${what}: ${actual} ≠ ${expected}`)

function simulate(bars: BarSeries, schedule: [number, number][], leverage: number, fee = 0, events: FundingSeries = NO_FUNDING) {
  const setup: SimulationSetup = {
    bars: [bars],
    funding: [events],
    rules: [BTCUSDT_RULES],
    capital: 1000,
    leverage,
    fees: feeRates('fixed_bps', fee),
    start: START,
    end: bars.openTime[bars.openTime.length - 1]!,
  }
  return simulateSingle(setup, new ScheduleSignal(new Map(schedule)))
}

describe('isolated-margin liquidation', () => {
  it('a 10× long is liquidated at its liquidation price when a bar’s low reaches it, fees included', () => {
    const bars = barsFromRows('BTCUSDT', START, HOUR, [
      [100, 100, 100, 100], // decide long at this close
      [100, 101, 99, 100], // buy at 100
      [99, 99.5, 90.3, 91], // low 90.3 ≤ LP 90.4
      [91, 92, 90, 91],
    ])
    const { ledger } = simulate(bars, [[0, 1]], 10, 5)
    // qty = floor_0.001(1000 × 10 / (100 × 1.0005)) = floor(99.950025) = 99.95; margin 999.5.
    // LP = (999.5 + 0 − 99.95 × 100) / (99.95 × 0.004 − 99.95) = 90.3614… → 90.4 (ceiled to the tick).
    assert.equal(ledger.trades.length, 1)
    const [trade] = ledger.trades
    assert.equal(trade!.exitReason, 'liquidation')
    assert.equal(trade!.qty, 99.95)
    assert.equal(trade!.exitPrice, 90.4)
    assert.equal(trade!.exitTime, START + 3 * HOUR - 1, 'stamped at the close time of the bar it happened in')
    // Fees: 99.95 × 100 × 0.0005 = 4.9975 entry, 99.95 × 90.4 × 0.0005 = 4.517740 at liquidation.
    close(trade!.fee, 4.9975 + 4.51774, 'fee')
    close(trade!.pnl, 99.95 * (90.4 - 100) - 4.9975 - 4.51774, 'pnl')
    close(ledger.cash, 1000 + trade!.pnl, 'cash')
    assert.equal(ledger.qty[0], 0)
  })

  it('a 5× short is liquidated when a bar’s high reaches its liquidation price', () => {
    const bars = barsFromRows('BTCUSDT', START, HOUR, [
      [100, 100, 100, 100],
      [100, 101, 99, 100], // sell 50 at 100, margin 1000
      [101, 119.5, 100, 110], // LP = (1000 + 5000) / (50 × 1.004) = 119.52… → 119.5 (floored)
    ])
    const { ledger } = simulate(bars, [[0, -1]], 5)
    const [trade] = ledger.trades
    assert.equal(trade!.side, 'sell')
    assert.equal(trade!.qty, 50)
    assert.equal(trade!.exitReason, 'liquidation')
    assert.equal(trade!.exitPrice, 119.5)
    close(ledger.cash, 1000 - 50 * 19.5, 'cash')
  })

  it('a carried position that gaps through its liquidation price is liquidated at that price before the bar’s fills', () => {
    const bars = barsFromRows('BTCUSDT', START, HOUR, [
      [100, 100, 100, 100],
      [100, 101, 99, 100], // buy 100 at 100 (10×, no fee): LP 90.4
      [85, 86, 84, 85], // opens below LP; the close order decided at bar 1 would otherwise fill at 85
      [85, 86, 84, 85],
    ])
    const { ledger } = simulate(bars, [[0, 1], [1, 0]], 10)
    assert.equal(ledger.trades.length, 1)
    const [trade] = ledger.trades
    assert.equal(trade!.exitReason, 'liquidation')
    assert.equal(trade!.exitPrice, 90.4)
    assert.equal(trade!.exitTime, START + 2 * HOUR, 'at the open it gapped through')
    close(ledger.cash, 1000 + 100 * (90.4 - 100), 'cash: the loss stops at the margin less the maintenance margin')
  })

  it('funding paid out of the isolated margin moves the liquidation price closer', () => {
    const bars = barsFromRows('BTCUSDT', START, HOUR, [
      [100, 100, 100, 100],
      [100, 100.5, 99, 100], // buy 200 at 100 (20×): margin 1000, LP 95.38… → 95.4
      [100, 100.5, 96, 97], // a 1 % funding event at this open costs 200: margin 800, LP 96.39… → 96.4 ≥ low 96
      [97, 98, 96, 97],
    ])
    const events = funding([{ time: START + 2 * HOUR, rate: 0.01, mark: 100 }])
    const { ledger } = simulate(bars, [[0, 1]], 20, 0, events)
    const [trade] = ledger.trades
    assert.ok(trade, 'liquidated')
    assert.equal(trade.exitPrice, 96.4)
    close(trade.funding, 200, 'funding')
    close(trade.pnl, 200 * (96.4 - 100) - 200, 'pnl')
    // Without the funding event the same bars leave the position open (low 96 > 95.4).
    const calm = simulate(bars, [[0, 1]], 20)
    assert.equal(calm.ledger.trades.length, 0)
    assert.equal(calm.ledger.liq[0], 95.4)
  })

  it('a 1× long cannot be liquidated: its margin covers the whole notional', () => {
    const bars = barsFromRows('BTCUSDT', START, HOUR, [
      [100, 100, 100, 100],
      [100, 100, 100, 100],
      [100, 100, 0.1, 0.2],
    ])
    const { ledger } = simulate(bars, [[0, 1]], 1)
    assert.equal(ledger.trades.length, 0)
    assert.equal(ledger.liq[0], 0)
  })
})

describe('liquidationPrice and the leverage tiers', () => {
  it('takes the rate and maintenance amount of the tier the notional at the liquidation price falls in', () => {
    // Short 2 BTC at 40,000 (80,000 notional, tier 2: 0.5 %, cum 50) at 10×: margin 8,000.
    // LP = (8000 + 50 + 80000) / (2 × 0.005 + 2) = 43,805.97…; its notional 87,611.9 is inside tier 2.
    close(liquidationPrice(-1, 2, 40_000, 8_000, BINANCE_BTCUSDT_BRACKETS), 88_050 / 2.01, 'tier 2 short')
    // Long 1 BTC at 52,000 (tier 2 at entry) at 20×: margin 2,600. Tier 2 would give 49,597.99, whose notional
    // is in tier 1, so tier 1 decides: (2600 + 0 − 52000) / (0.004 − 1) = 49,598.39…
    close(liquidationPrice(1, 1, 52_000, 2_600, BINANCE_BTCUSDT_BRACKETS), 49_400 / 0.996, 'tier 1 by the liquidation price')
    assert.equal(maintenanceMargin(BINANCE_BTCUSDT_BRACKETS, 80_000), 80_000 * 0.005 - 50)
    assert.equal(maintenanceMargin(BINANCE_BTCUSDT_BRACKETS, 10_000_000), 10_000_000 * 0.025 - 46_300)
  })

  it('at the liquidation price the margin balance equals the maintenance margin (random positions)', () => {
    const next = random(7)
    for (let k = 0; k < 500; k++) {
      const side = next() < 0.5 ? 1 : -1
      const entry = 1000 + next() * 100_000
      const qty = 0.001 + next() * 500
      const leverage = 1 + Math.floor(next() * 20)
      const margin = (qty * entry) / leverage
      const price = liquidationPrice(side, qty, entry, margin, BINANCE_BTCUSDT_BRACKETS)
      if (price === 0) {
        assert.equal(side, 1, 'only a long can be out of reach')
        continue
      }
      const balance = margin + side * qty * (price - entry)
      const required = maintenanceMargin(BINANCE_BTCUSDT_BRACKETS, qty * price)
      assert.ok(Math.abs(balance - required) <= 1e-6 * qty * entry, `k=${k}: balance ${balance} ≠ maintenance ${required}`)
      assert.ok(side === 1 ? price < entry : price > entry)
    }
  })

  it('the BTCUSDT table is consistent: cum(n) = cum(n−1) + floor(n) × (rate(n) − rate(n−1))', () => {
    const tiers = BINANCE_BTCUSDT_BRACKETS
    for (let n = 1; n < tiers.length; n++) {
      const expected = tiers[n - 1]!.cum + tiers[n]!.notionalFloor * (tiers[n]!.maintMarginRatio - tiers[n - 1]!.maintMarginRatio)
      close(tiers[n]!.cum, expected, `tier ${n + 1} cum`, 1e-6)
      assert.equal(tiers[n]!.notionalFloor, tiers[n - 1]!.notionalCap)
    }
  })
})

describe('exchange-side closes booked into a ledger (live runs)', () => {
  it("reduces by a partial fill at the exchange's price and fee, then closes the trade with the exchange's reason", async () => {
    const { Ledger } = await import('../../src/engine/ledger.js')
    const ledger = new Ledger(['BTCUSDT'], [BTCUSDT_RULES], 10_000, 5, 0.0005)
    ledger.moveTo(0, -0.1, 100_000, START) // short 0.1 at 100,000: taker fee 5
    close(ledger.feesPaid, 5, 'entry fee')
    // The exchange auto-deleverages 0.04 at 101,000 without a fee, then the rest at 102,000 for a fee of 1.23.
    ledger.exchangeClose(0, 0.04, 101_000, START + HOUR, 'adl', 0)
    assert.equal(ledger.qty[0], -0.06)
    assert.equal(ledger.trades.length, 0, 'a partial close closes no trade')
    close(ledger.feesPaid, 5, 'no fee for the ADL fill')
    ledger.exchangeClose(0, 0.06, 102_000, START + 2 * HOUR, 'adl', 1.23)
    assert.equal(ledger.qty[0], 0)
    const [trade] = ledger.trades
    assert.equal(trade!.exitReason, 'adl')
    assert.equal(trade!.qty, 0.1)
    close(trade!.exitPrice, (0.04 * 101_000 + 0.06 * 102_000) / 0.1, 'volume-weighted exit', 1e-6)
    close(trade!.fee, 5 + 1.23, 'entry fee plus the exchange’s')
    close(trade!.pnl, -(0.04 * 1000 + 0.06 * 2000) - 6.23, 'pnl net of fees', 1e-6)
    close(ledger.cash, 10_000 + trade!.pnl, 'cash moved by the pnl alone', 1e-6)
    // Nothing held: a later exchange fill changes nothing.
    ledger.exchangeClose(0, 0.01, 103_000, START + 3 * HOUR, 'liquidation', 1)
    assert.equal(ledger.trades.length, 1)
    close(ledger.cash, 10_000 + trade!.pnl, 'unchanged', 1e-6)
  })
})
