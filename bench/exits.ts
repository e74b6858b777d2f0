import os from 'node:os'
import type { BacktestInput } from '../src/engine/index.js'
import { atLeast } from './support/ceiling.js'
import { engineBenchData, measureBacktest, MINUTE, resample, SOURCE, smaCrossInput } from './support/engine-bars.js'
import { log } from './support/log.js'
import type { SuiteResult } from './support/suite.js'

/** Issue 30: the engine's walk over 1m bars with stop, target and trailing, on one core. */
const GOAL_EXAMINED_1M_PER_S = 20_000_000
const HOUR = 3_600_000
const WARMUP_RUNS = 3
const MEASURED_RUNS = 9

/**
 * The engine alone (no database, no HTTP): sma_cross 10/30 with allow_short on 1h bars made from the
 * engine bench's 2.6 M BTCUSDT 1m bars, so a position is held most of the time (about 85 % of the hours:
 * after a protective exit the latch keeps it flat until the next cross), with a stop, a target and a
 * trailing stop examined on those 1m bars. Reports the 1m bars the exit walk examined per second of the
 * whole backtest (the strategy's own work included), and the same backtest without exits beside it.
 */
export async function run(): Promise<SuiteResult> {
  log(`loading ${SOURCE}`)
  const { bars: minutes, funding, sourceBars } = engineBenchData()
  const hours = resample(minutes, HOUR)
  log(`built ${minutes.openTime.length} 1m bars (${sourceBars} real bars, played forward and backward) and ${hours.openTime.length} 1h bars`)
  // Capital enough that losses never shrink the orders below minNotional: the strategy trades to the end.
  const plain: BacktestInput = { ...smaCrossInput({ bars: hours, funding }), params: { fast: 10, slow: 30, allow_short: true }, capital: 1_000_000 }
  const input: BacktestInput = {
    ...plain,
    exits: { stopLoss: 0.02, takeProfit: 0.06, trailingStop: 0.03, trailingActivation: 0.02, trigger: 'last' },
    slippageBps: 2,
    detail: [{ bars: [minutes] }],
  }

  const withExits = measureBacktest(input, WARMUP_RUNS, MEASURED_RUNS)
  const without = measureBacktest(plain, WARMUP_RUNS, MEASURED_RUNS)
  const result = withExits.result
  const examinedStrategyBars = Object.values(result.exitResolution!.BTCUSDT!).reduce((a, b) => a + b, 0)
  // Each strategy bar examined on 1m bars is 60 of them, less the rest of a bar after an exit in it.
  const examined1m = (result.exitResolution!.BTCUSDT!['1m'] ?? 0) * (HOUR / MINUTE)
  const rate = (bars: number, ms: number) => Math.round((bars / ms) * 1000)
  log(`with exits: median ${withExits.median.toFixed(1)} ms (CPU ${withExits.medianCpu.toFixed(1)} ms); without: ${without.median.toFixed(1)} ms`)

  const failures: string[] = []
  if (examinedStrategyBars < hours.openTime.length / 2) failures.push('the strategy held a protected position in under half its bars: the walk did little')
  if (result.trades.length === 0) failures.push('no trades: the measured run did no real work')
  const report = {
    suite: 'exits',
    engine: {
      template: 'sma_cross',
      params: input.params,
      exits: input.exits,
      slippage_bps: input.slippageBps,
      strategy_bars_1h: hours.openTime.length,
      bars_1m: minutes.openTime.length,
      source: `${SOURCE}, ${sourceBars} bars played alternately forward and backward; 1h bars resampled from them`,
      examined_strategy_bars: result.exitResolution!.BTCUSDT,
      examined_1m_bars: examined1m,
      ambiguous_exits: result.ambiguousExits!.total,
      trades: result.trades.length,
      exit_reasons: result.metrics.exitReasons,
      runs: MEASURED_RUNS,
      warmup_runs: WARMUP_RUNS,
      best_ms: round(withExits.best),
      median_ms: round(withExits.median),
      median_cpu_ms: round(withExits.medianCpu),
      median_examined_1m_bars_per_s: rate(examined1m, withExits.median),
      median_examined_1m_bars_per_cpu_s: rate(examined1m, withExits.medianCpu),
      best_examined_1m_bars_per_s: rate(examined1m, withExits.best),
      without_exits: { median_ms: round(without.median), median_cpu_ms: round(without.medianCpu), trades: without.result.trades.length },
      load_average: os.loadavg().map((x) => Math.round(x * 100) / 100),
    },
    goal: { median_examined_1m_bars_per_cpu_s: atLeast(rate(examined1m, withExits.medianCpu), GOAL_EXAMINED_1M_PER_S) },
    node: process.version,
  }
  return { report, failures }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10
}
