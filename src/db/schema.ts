import type { ColumnType, Generated } from 'kysely'

/** Kysely's view of our tables; migrations/ is the source of truth. */
export interface Database {
  users: UsersTable
  api_keys: ApiKeysTable
  public_strategies: PublicStrategiesTable
  strategies: StrategiesTable
  seen_signatures: SeenSignaturesTable
  rate_windows: RateWindowsTable
  backtest_jobs: BacktestJobsTable
  kline_chunks: KlineChunksTable
  market_coverage: MarketCoverageTable
  funding_events: FundingEventsTable
  events: EventsTable
}

type Timestamp = ColumnType<Date, Date | string, Date | string>
type DefaultedTimestamp = ColumnType<Date, Date | string | undefined, Date | string>

export interface UsersTable {
  id: Generated<number>
  email: string
  name: Generated<string>
  idpa_id: string | null
  idpb_id: string | null
  plan: Generated<'free' | 'standard' | 'pro'>
  plan_expires_at: Date | null
  created_at: DefaultedTimestamp
  updated_at: DefaultedTimestamp
}

export interface ApiKeysTable {
  id: string
  user_id: number
  name: Generated<string>
  scopes: string[]
  secret_enc: string
  created_at: DefaultedTimestamp
  revoked_at: Date | null
}

export interface PublicStrategiesTable {
  id: Generated<number>
  name: string
  author: string | null
  description: string | null
  entry_condition: string | null
  exit_condition: string | null
  bot_name: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

export type StrategyStatus = 'draft' | 'deployed' | 'paused' | 'stopped' | 'error'

export interface StrategiesTable {
  id: string
  user_id: number
  name: string
  template_id: string
  params: ColumnType<Record<string, unknown>, string, string>
  symbols: string[]
  timeframe: string
  /** numeric: pg returns it as a string, which keeps every digit. */
  capital: string
  leverage: number
  status: Generated<StrategyStatus>
  deployed_at: Date | null
  created_at: Timestamp
  updated_at: Timestamp
  deleted_at: Date | null
  stat_open_positions: Generated<number>
  stat_total_pnl: Generated<string>
  stat_total_trades: Generated<number>
  stat_winning_trades: Generated<number>
}

export interface SeenSignaturesTable {
  signature: string
  expires_at: Timestamp
}

export interface RateWindowsTable {
  bucket: string
  window_id: string | number
  used: number
}

export type JobStatus = 'queued' | 'running' | 'done' | 'failed' | 'cancelled'

type Json<T> = ColumnType<T, string, string>

export interface BacktestJobsTable {
  id: string
  user_id: number
  status: JobStatus
  template_id: string
  config: Json<Record<string, unknown>>
  submitted_at: Timestamp
  started_at: Date | null
  finished_at: Date | null
  heartbeat_at: Date | null
  progress: Generated<number>
  metrics: Json<Record<string, unknown>> | null
  result: Json<Record<string, unknown>> | null
  error: Json<{ code: string; message: string }> | null
  cancel_reason: string | null
}

/** int8 columns arrive as strings from pg; written as numbers. */
type BigIntColumn = ColumnType<string, number, number>

export interface KlineChunksTable {
  symbol: string
  interval: string
  chunk_start: BigIntColumn
  bars: number
  data: Buffer
}

export interface MarketCoverageTable {
  symbol: string
  dataset: string
  from_ms: BigIntColumn
  to_ms: BigIntColumn
}

export interface FundingEventsTable {
  symbol: string
  funding_time: BigIntColumn
  rate: number
  mark_price: number | null
}

export interface EventsTable {
  id: string
  user_id: number
  type: string
  data: Json<Record<string, unknown>>
  created_at: Timestamp
}
