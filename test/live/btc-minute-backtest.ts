import { symbolRules } from '../../src/backtests/upstream-history.js'
import { runBacktest } from '../../src/engine/index.js'
import { PAPER_FEES } from '../../src/live/deploy.js'
import type { MarketData } from '../../src/market/market-data.js'
import { loadFunding, loadKlines } from '../engine/helpers.js'

/** A backtest on the recorded BTCUSDT minutes the replay exchange serves, with a run's fees and the exchange's rules: what a run is compared with. */
export async function btcMinuteBacktest(market: MarketData, run: { params: Record<string, unknown>; capital: number; leverage: number; start: number; end: number }) {
  const rules = await symbolRules(market, 'BTCUSDT')
  return runBacktest({
    templateId: 'sma_cross',
    params: run.params,
    bars: [loadKlines('BTCUSDT', 'BTCUSDT-1m-20250504-20250624.csv.gz', 60_000)],
    funding: [loadFunding('BTCUSDT-fundingRate-20190910-20260517.csv')],
    rules: [rules],
    capital: run.capital,
    leverage: run.leverage,
    fees: PAPER_FEES,
    start: run.start,
    end: run.end,
  })
}
