import { feeRates } from '../../src/engine/index.js'
import { barsFromCloses, BTCUSDT_RULES, HOUR, NO_FUNDING } from '../engine/helpers.js'

/** An engine pool request for an sma_cross backtest over `hours` hourly bars of a sine wave from 2024-01-01. */
export function smaInput(hours: number) {
  const start = Date.UTC(2024, 0, 1)
  const closes = Array.from({ length: hours }, (_, i) => 100 + 10 * Math.sin(i / 4))
  return {
    templateId: 'sma_cross',
    params: { fast: 3, slow: 8 },
    bars: [barsFromCloses('BTCUSDT', start, HOUR, closes)],
    funding: [NO_FUNDING],
    rules: [BTCUSDT_RULES],
    capital: 10_000,
    leverage: 1,
    fees: feeRates('fixed_bps', 5),
    start,
    end: start + (hours - 1) * HOUR,
  }
}
