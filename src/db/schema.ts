import type { Exits } from '../strategies/exits.js'
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
  backtest_sweeps: BacktestSweepsTable
  backtest_sweep_tasks: BacktestSweepTasksTable
  backtest_sweep_runs: BacktestSweepRunsTable
  kline_chunks: KlineChunksTable
  market_coverage: MarketCoverageTable
  archive_claims: ArchiveClaimsTable
  funding_events: FundingEventsTable
  events: EventsTable
  webhooks: WebhooksTable
  deliveries: DeliveriesTable
  delivery_attempts: DeliveryAttemptsTable
  exchange_keys: ExchangeKeysTable
  strategy_runs: StrategyRunsTable
  balance_alerts: BalanceAlertsTable
  strategy_orders: StrategyOrdersTable
  strategy_trades: StrategyTradesTable
  protective_orders: ProtectiveOrdersTable
  custom_templates: CustomTemplatesTable
  custom_template_versions: CustomTemplateVersionsTable
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
  /** numeric (0006_live): the dry-run wallet, 10,000 USDT unless set. */
  paper_balance: ColumnType<string, string | undefined, string>
}

export interface ApiKeysTable {
  id: string
  user_id: number
  name: Generated<string>
  scopes: string[]
  secret_enc: string
  created_at: DefaultedTimestamp
  revoked_at: Date | null
  last_rotated_at: ColumnType<Date | null, Date | null | undefined, Date | null>
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
  /** The custom template's version (0011_custom_templates); null for a built-in template. */
  template_version: ColumnType<number | null, number | null | undefined, number | null>
  stat_open_positions: Generated<number>
  stat_total_pnl: Generated<string>
  stat_total_trades: Generated<number>
  stat_winning_trades: Generated<number>
  /** Why it is (or last was) in error (0013_run_visibility); null when none, cleared by the next deploy. */
  last_error_code: ColumnType<string | null, string | null | undefined, string | null>
  last_error_message: ColumnType<string | null, string | null | undefined, string | null>
  last_error_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  /** Protective exits as written (0019_strategy_exits; src/strategies/exits.ts), null for none. */
  exits: ColumnType<Exits | null, string | null | undefined, string | null>
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
  /** Which run of the job owns it: 1, then 2 after a re-run (0005_recovery.sql). */
  attempt: Generated<number>
  progress: Generated<number>
  metrics: Json<Record<string, unknown>> | null
  /** The result's JSON, zlib-compressed (backtests/result-codec.ts). */
  result: Buffer | null
  error: Json<{ code: string; message: string }> | null
  cancel_reason: string | null
}

/** A parameter sweep (issue 23, migrations/0018_sweeps.sql). */
export interface BacktestSweepsTable {
  id: string
  user_id: number
  status: JobStatus
  template_id: string
  config: Json<Record<string, unknown>>
  /** Every configuration's resolved params, in run order. */
  configurations: Json<Record<string, unknown>[]>
  runs_total: number
  runs_done: Generated<number>
  /** The days of every run's daily equity: epoch ms, little-endian float64. */
  days: Buffer | null
  submitted_at: Timestamp
  started_at: Date | null
  finished_at: Date | null
  result: Json<Record<string, unknown>> | null
  error: Json<{ code: string; message: string }> | null
  cancel_reason: string | null
}

export type SweepTaskKind = 'runs' | 'statistics'
export type SweepTaskStatus = 'waiting' | 'queued' | 'running' | 'done'

export interface BacktestSweepTasksTable {
  sweep_id: string
  task_no: number
  kind: SweepTaskKind
  status: SweepTaskStatus
  first_run: number
  run_count: number
  attempt: Generated<number>
  heartbeat_at: Date | null
}

export interface BacktestSweepRunsTable {
  sweep_id: string
  run_no: number
  params: Json<Record<string, unknown>>
  metrics: Json<Record<string, unknown>>
  objective: number | null
  /** Daily equity values, little-endian float64. */
  equity: Buffer
}

/** int8 columns arrive as strings from pg; written as numbers. */
type BigIntColumn = ColumnType<string, number, number>

export interface KlineChunksTable {
  symbol: string
  interval: string
  chunk_start: BigIntColumn
  bars: number
  data: Buffer
  /** 1 when written, bumped by every rewrite (migration 0010); int8, so a string when read. */
  revision: ColumnType<string, never, number>
}

export interface MarketCoverageTable {
  symbol: string
  dataset: string
  from_ms: BigIntColumn
  to_ms: BigIntColumn
  /** The exchange's time when the span was fetched; null for spans stored before 0016 (judged by our clock). */
  exchange_time_ms: ColumnType<string | null, number | null | undefined, number | null>
}

/** A node's lease on downloading one archive file for the store (migration 0017). */
export interface ArchiveClaimsTable {
  file: string
  node: string
  claimed_until: BigIntColumn
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
  /** Set once the webhook pipeline turned the event into deliveries (0003_webhooks). */
  fanned_out_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
  /** Write order (0003_webhooks); created_at can tie. */
  seq: ColumnType<string, never, never>
}

export type VerificationStatus = 'pending' | 'verified' | 'failed'

export interface ExchangeKeysTable {
  id: string
  user_id: number
  label: string | null
  api_key_enc: string
  api_key_masked: string
  api_key_sha256: string
  api_secret_enc: string
  verification_status: VerificationStatus
  verification_code: number | null
  verification_message: string | null
  last_verified: Date | null
  created_at: Timestamp
}

export type WebhookStatus = 'active' | 'paused' | 'broken'

export interface WebhooksTable {
  id: string
  user_id: number
  url: string
  events: string[]
  description: string | null
  status: Generated<WebhookStatus>
  /** numeric: pg returns it as a string, which keeps every digit. */
  balance_low_threshold: string | null
  secret_enc: string
  consecutive_failures: Generated<number>
  last_delivery_at: Date | null
  last_success_at: Date | null
  created_at: Timestamp
  updated_at: Timestamp
}

export type DeliveryState = 'pending' | 'delivered' | 'failed'

/** bigint identity columns arrive as strings from pg. */
type BigIdColumn = ColumnType<string, never, never>

export interface DeliveriesTable {
  id: BigIdColumn
  webhook_id: string
  event_id: string
  event_type: string
  body: string | null
  state: Generated<DeliveryState>
  attempts: Generated<number>
  next_attempt_at: Date | null
  lease: string | null
  last_status: number | null
  last_error: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface DeliveryAttemptsTable {
  id: BigIdColumn
  delivery_id: ColumnType<string, string, string>
  webhook_id: string
  event_id: string
  event_type: string
  attempt: number
  attempted_at: Timestamp
  delivered: boolean
  response_status: number | null
  response_time_ms: number | null
  error: string | null
}

/** One deploy of a strategy (0006_live); active while ended_at is null. numeric columns arrive as strings. */
export interface StrategyRunsTable {
  strategy_id: string
  run: number
  user_id: number
  template_id: string
  /** A custom template's pinned version and the seed of its Math.random (0012_custom_runs); null for built-ins. */
  template_version: number | null
  seed: number | null
  params: Json<Record<string, unknown>>
  /** The first of `symbols`. */
  symbol: string
  /** Every symbol the run trades, in the strategy's order (0015_multi_symbol_runs): one for one-symbol templates. */
  symbols: string[]
  timeframe: string
  capital: string
  leverage: number
  dry_run: boolean
  exchange_key_id: string | null
  started_at: Timestamp
  ended_at: Date | null
  lease_owner: string | null
  lease_expires_at: Date | null
  state: Json<Record<string, unknown>> | null
  /** The open time of the last bar the run acted on (0013_run_visibility), written with its state. */
  last_bar_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  /** Starts that failed in a row; the third moves the strategy to error (0013_run_visibility). */
  start_failures: ColumnType<number, number | undefined, number>
  /** The strategy's exits as deployed (0020_run_exits), null for none: what the run's paper broker applies. */
  exits: ColumnType<Exits | null, string | null | undefined, string | null>
}

export type OrderStatus = 'new' | 'filled' | 'skipped' | 'cancelled'

export interface StrategyOrdersTable {
  client_order_id: string
  strategy_id: string
  run: number
  intent: number
  symbol: string
  target: string | null
  reduce_only: boolean
  status: OrderStatus
  side: 'buy' | 'sell' | null
  qty: string | null
  price: string | null
  fee: string | null
  created_at: Timestamp
  filled_at: Date | null
  /** 0025_order_stated_at: the exchange's time of the close that stated it (null: a pause's close, or written before). */
  stated_at: ColumnType<Date | null, Date | null | undefined, Date | null>
  /** A protective exit's order (0020_run_exits): stop_loss, take_profit or trailing_stop; null for the strategy's own. */
  exit_reason: ColumnType<string | null, string | null | undefined, string | null>
}

/** 0022_protective_orders: a live run's protective (algo) orders, each committed before it is sent. */
export type ProtectiveStatus = 'intent' | 'open' | 'unknown' | 'canceled' | 'triggered' | 'finished' | 'expired' | 'rejected'

export interface ProtectiveOrdersTable {
  client_algo_id: string
  strategy_id: string
  run: number
  seq: number
  symbol: string
  kind: 'stop_loss' | 'take_profit' | 'trailing_stop'
  type: 'STOP_MARKET' | 'TAKE_PROFIT_MARKET' | 'TRAILING_STOP_MARKET' | 'MARKET'
  side: 'BUY' | 'SELL'
  trigger_price: string | null
  quantity: string | null
  close_position: boolean
  working_type: 'MARK_PRICE' | 'CONTRACT_PRICE'
  activate_price: string | null
  callback_rate: string | null
  status: ProtectiveStatus
  /** bigint: Binance's algo ids pass 2^53 only in theory (1000000033225453 seen); read as a string. */
  algo_id: ColumnType<string | null, string | number | null | undefined, string | number | null>
  last_error: string | null
  sent_at: Date | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface StrategyTradesTable {
  strategy_id: string
  id: number
  run: number
  symbol: string
  side: 'buy' | 'sell'
  entry_time: Timestamp
  entry_price: string
  exit_time: Timestamp
  exit_price: string
  qty: string
  fee: string
  funding: string
  pnl: string
  exit_reason: string
}

export interface BalanceAlertsTable {
  exchange_key_id: string
  asset: string
  below: boolean
  changed_at: Date
}

export interface CustomTemplatesTable {
  id: string
  user_id: number
  name: string
  description: string | null
  latest_version: number
  created_at: Timestamp
  updated_at: Timestamp
  deleted_at: Date | null
}

export interface CustomTemplateVersionsTable {
  template_id: string
  version: number
  language: 'javascript' | 'typescript'
  source: string
  code: string
  sha256: string
  params_schema: Json<Record<string, unknown>>
  defaults: Json<Record<string, number | boolean>>
  multi_symbol: boolean
  warmup: number
  has_validate: boolean
  /** The upload's smoke run, µs per bar (0023_module_cost); null for versions stored before. */
  smoke_us_per_bar: number | null
  created_at: Timestamp
}
