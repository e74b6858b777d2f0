import type { Db } from '../../db/connect.js'
import type { SymbolRules } from '../../engine/types.js'
import type { HistorySource } from '../../backtests/history-store.js'
import type { RunSandboxes } from '../../custom-templates/sandbox/run-sandbox.js'
import type { BinanceTradingClient } from '../../trading/binance/trading-client.js'
import type { UserDataStreams } from '../exchange/user-data-streams.js'
import type { RunRow } from '../queries.js'
import type { KlineStreams } from '../stream/kline-streams.js'
import type { RunCommits } from './run-commits.js'
import type { MarkKlineSource } from './shared-history.js'

/** What the runner pool gives each runner, one-symbol or many. */
export interface RunnerDeps {
  db: Db
  /** The pool's group commit: every write of a runner goes through it, fenced by the run's lease. */
  commits: Pick<RunCommits, 'commit'>
  history: HistorySource
  /** Mark-price klines over REST: the minutes a dry run's exits with trigger mark examine. */
  markKlines: MarkKlineSource
  streams: KlineStreams
  /** The symbol's rules for this run (a live run's brackets are its account's). */
  rules: (symbol: string, run: RunRow) => Promise<SymbolRules>
  owner: string
  now: () => number
  /** The exchange's clock (GET /fapi/v1/time): the replay exchange's runs faster than ours. */
  exchangeNow: () => Promise<number>
  onError: (error: unknown, run: RunRow) => void
  /** The signed client of a live run's exchange key (absent where this process holds no master key). */
  tradingClient?: (run: RunRow) => Promise<BinanceTradingClient>
  /** The process's user data streams, one per exchange account: a live run hears its orders' and positions' changes there. */
  userStreams?: UserDataStreams
  /** Told once per stream bar, after the first commit that bar caused (bench/live.ts measures with it). */
  observe?: (timing: BarTiming) => void
  /** The node's sandbox threads, for runs of custom templates. */
  sandboxes: RunSandboxes
}

/** One closed bar from the stream, from its receipt in this process to the commit of what it did. */
export interface BarTiming {
  strategyId: string
  symbol: string
  openTime: number
  /** performance.now() when the stream message arrived (KlineStreams), and when the bar's first commit returned. */
  receivedAt: number
  committedAt: number
  /** Whether that commit wrote an order intent (a strategy_orders row, status new). */
  order: boolean
}
