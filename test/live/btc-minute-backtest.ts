import type { MarketData } from '../../src/market/market-data.js'
import { minuteBacktest } from './backtest-parity.js'

/** sma_cross on the recorded BTCUSDT minutes the replay exchange serves, with a run's fees and the exchange's rules: what a one-symbol run is compared with. */
export async function btcMinuteBacktest(market: MarketData, run: { params: Record<string, unknown>; capital: number; leverage: number; start: number; end: number }) {
  return (await minuteBacktest(market, run)).result
}
