import { type Static, Type } from 'typebox'
import { EXIT_REASONS, FEE_MODELS, type FeeModel } from '../engine/index.js'
import { Cursor, IsoTimestamp, PageLimit } from '../http/common-schemas.js'
import { TIMEFRAMES } from '../strategies/schemas.js'
import { SYMBOL_PATTERN } from '../market/symbol-pattern.js'
import { ExitsSchema, SlippageSchema } from '../strategies/exits.js'

export const JOB_STATUSES = ['queued', 'running', 'done', 'failed', 'cancelled'] as const

const UtcTime = (description: string) => Type.String({ maxLength: 40, description, examples: ['2024-01-01T00:00:00Z'] })

/** Why naming strategy_id needs strategies:read beside backtests:write: the job's config shows the stored strategy's params (issue 37). */
export const STRATEGY_ID_SCOPE = 'strategy_id reads a stored strategy, whose params the config shows'

/** Every field optional at the schema level: with strategy_id the stored strategy supplies the rest. */
export const JobCreateSchema = Type.Object(
  {
    template_id: Type.Optional(Type.String({ maxLength: 64, description: 'Strategy template id (GET /v1/templates)' })),
    params: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'Template parameters; defaults fill the rest' })),
    symbols: Type.Optional(
      Type.Array(Type.String({ pattern: SYMBOL_PATTERN }), { minItems: 1, maxItems: 50, uniqueItems: true, description: 'Uppercase symbols; several only for multi-symbol templates' }),
    ),
    timeframe: Type.Optional(Type.Enum(TIMEFRAMES)),
    start: Type.Optional(UtcTime('Inclusive lower bound, ISO 8601 UTC')),
    end: Type.Optional(UtcTime('Inclusive upper bound, ISO 8601 UTC; after start, at most 5 years later, not in the future')),
    capital: Type.Optional(Type.String({ maxLength: 40, description: 'Starting equity in quote currency, a decimal string' })),
    leverage: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: 'Default 1' })),
    fee_model: Type.Optional(Type.Enum(FEE_MODELS, { description: 'Default fixed_bps' })),
    fee_bps: Type.Optional(Type.String({ maxLength: 40, description: 'Per-fill fee in basis points for fixed_bps; default 5' })),
    strategy_id: Type.Optional(
      Type.String({ maxLength: 64, description: 'A stored strategy whose fields are the base; request fields override them. Reads the strategy: needs the scope strategies:read too (else 403)' }),
    ),
    template_version: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: "A custom template's version; default its latest (or the strategy's pinned one)" })),
    template_sha256: Type.Optional(
      Type.String({ pattern: '^[0-9a-f]{64}$', description: "A custom template: the SHA-256 of the code a job's config recorded; refused unless it is the version's" }),
    ),
    seed: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: 2_147_483_647,
        description: "A custom template: the seed of the module's Math.random; default a random one. A job's config, posted again as it is, gives the same result",
      }),
    ),
    exits: Type.Optional(ExitsSchema),
    slippage_bps: Type.Optional(SlippageSchema),
  },
  { additionalProperties: false },
)
export type JobCreate = Static<typeof JobCreateSchema>

export const JobConfigSchema = Type.Object({
  template_id: Type.String(),
  params: Type.Record(Type.String(), Type.Unknown()),
  symbols: Type.Array(Type.String()),
  timeframe: Type.Enum(TIMEFRAMES),
  start: IsoTimestamp,
  end: IsoTimestamp,
  capital: Type.String(),
  leverage: Type.Integer(),
  fee_model: Type.Enum(FEE_MODELS),
  fee_bps: Type.Optional(Type.String()),
  strategy_id: Type.Optional(Type.String()),
  template_version: Type.Optional(Type.Integer({ description: 'A custom template: the version the job runs' })),
  template_sha256: Type.Optional(Type.String({ description: 'A custom template: the SHA-256 of the code the job runs' })),
  seed: Type.Optional(Type.Integer({ description: "A custom template: the seed of the module's Math.random" })),
  exits: Type.Optional({ ...ExitsSchema, description: 'The protective exits the job ran with (the request\'s, else its strategy\'s), trigger spelled out; absent: none' }),
  slippage_bps: Type.Optional(Type.String({ description: 'Basis points every market fill was worsened by; absent = 0' })),
})
export type JobConfig = Static<typeof JobConfigSchema>

const NullableDecimal = (description: string) => Type.Union([Type.String(), Type.Null()], { description })

export const MetricsSchema = Type.Object(
  {
    sharpe: NullableDecimal('mean/std (ddof 1) of daily returns × √365; null when undefined'),
    sortino: NullableDecimal('mean of daily returns / downside deviation over all days × √365'),
    calmar: NullableDecimal('cagr / |max_drawdown|'),
    max_drawdown: NullableDecimal('largest peak-to-trough fall of daily equity, a negative fraction'),
    win_rate: NullableDecimal('winning closed trades / closed trades (net of fees and funding)'),
    profit_factor: NullableDecimal('gross profit / gross loss of closed trades'),
    cagr: NullableDecimal('compound annual growth over calendar days (365-day year)'),
    expected_value: NullableDecimal('mean net pnl per closed trade, quote currency'),
    total_trades: Type.Integer(),
    avg_trade_duration_seconds: Type.Union([Type.Integer(), Type.Null()]),
    exit_reasons: Type.Optional(
      Type.Object(
        {
          signal: Type.Integer({ description: 'Closed by the strategy (a target change or the end of a reversal)' }),
          stop_loss: Type.Integer(),
          take_profit: Type.Integer(),
          trailing_stop: Type.Integer(),
          liquidation: Type.Integer(),
          adl: Type.Integer({ description: 'Auto-deleveraged by the exchange: live runs only, 0 in a backtest' }),
        },
        { description: 'Closed trades per exit_reason; only in runs with protective exits (the config\'s exits, or levels a module stated)' },
      ),
    ),
  },
  { description: 'Undefined metrics (no trades, no losses, zero variance) are null, never a sentinel number.' },
)

export const TradeSchema = Type.Object({
  id: Type.Integer(),
  side: Type.Enum(['buy', 'sell'], { description: 'buy = long, sell = short' }),
  symbol: Type.String(),
  entry_time: IsoTimestamp,
  entry_price: Type.String(),
  exit_time: IsoTimestamp,
  exit_price: Type.String(),
  qty: Type.String(),
  pnl: Type.String({ description: 'Net of fees and funding' }),
  fee: Type.String({ description: 'Entry plus exit fee' }),
  funding: Type.String({ description: 'Funding paid during the trade (negative when received)' }),
  exit_reason: Type.Optional(
    Type.Enum(EXIT_REASONS, {
      description:
        'signal: the strategy closed it; liquidation: the engine liquidated it at its liquidation price; stop_loss, take_profit, trailing_stop: a protective exit filled (exits, or a level the module stated); adl: the exchange auto-deleveraged it (live runs only)',
    }),
  ),
})

export const GapSchema = Type.Object({ symbol: Type.String(), from: IsoTimestamp, to: IsoTimestamp, missing_bars: Type.Integer() })

export const OpenPositionSchema = Type.Object({
  symbol: Type.String(),
  side: Type.Enum(['buy', 'sell']),
  qty: Type.String(),
  entry_time: IsoTimestamp,
  entry_price: Type.String(),
  mark_price: Type.String({ description: 'The last close, at which the position is marked' }),
  unrealized_pnl: Type.String(),
})

export const MarginTableSchema = Type.Object(
  {
    source: Type.Enum(['snapshot', 'fallback'], {
      description: "snapshot: Binance's per-symbol leverage brackets recorded on as_of; fallback: every symbol used the BTCUSDT sample table",
    }),
    as_of: Type.String({ description: 'The day the snapshot was recorded (YYYY-MM-DD), or "BTCUSDT sample" for the fallback' }),
    fallback_symbols: Type.Array(Type.String(), { description: 'Symbols the snapshot lacks, margined with the BTCUSDT sample table instead' }),
  },
  { description: 'The maintenance-margin tiers (leverage brackets) the engine used for liquidation prices' },
)

export const ResultSchema = Type.Object({
  metrics: MetricsSchema,
  equity_curve: Type.Optional(Type.Array(Type.Tuple([IsoTimestamp, Type.String()]), { description: 'One point per simulated UTC day; the first is the capital at start' })),
  trades: Type.Optional(Type.Array(TradeSchema)),
  open_positions: Type.Optional(Type.Array(OpenPositionSchema, { description: 'Marked at the last close, not closed' })),
  gaps: Type.Optional(Type.Array(GapSchema, { description: 'Missing bars in the history, reported and never filled' })),
  final_equity: Type.Optional(Type.String()),
  fees_paid: Type.Optional(Type.String()),
  funding_paid: Type.Optional(Type.String()),
  margin_table: Type.Optional(MarginTableSchema),
  exit_resolution: Type.Optional(
    Type.Record(Type.String(), Type.Record(Type.String(), Type.Integer()), {
      description:
        'Runs with protective exits only: per symbol, how many strategy bars holding a protected position were examined at each resolution ("1m", "5m", … ; "mark_1m", … for trigger mark; the strategy\'s own timeframe where no finer bars covered the bar), e.g. {"BTCUSDT": {"1m": 812, "1h": 3}}',
      examples: [{ BTCUSDT: { '1m': 812, '5m': 40, '1h': 3 } }],
    }),
  ),
  ambiguous_exits: Type.Optional(
    Type.Object(
      {
        total: Type.Integer(),
        by_symbol: Type.Record(Type.String(), Type.Integer()),
      },
      { description: 'Runs with protective exits only: examined bars whose range held both a stop-side and a target-side level (the path between them unknown, the stop side filled), in all and per symbol' },
    ),
  ),
  warnings: Type.Optional(
    Type.Array(Type.String(), {
      description:
        'What the history lacked, one line per symbol ("BTCUSDT 1h: 721 of 744 bars missing between … and …", or no funding events); empty when complete. A range with no bar at all fails as NO_DATA instead.',
    }),
  ),
})

export const JobSchema = Type.Object({
  id: Type.String({ pattern: '^bt_[0-9a-f]{6,8}$' }),
  status: Type.Enum(JOB_STATUSES),
  config: JobConfigSchema,
  submitted_at: IsoTimestamp,
  started_at: Type.Union([IsoTimestamp, Type.Null()]),
  finished_at: Type.Union([IsoTimestamp, Type.Null()]),
  progress: Type.Number({ minimum: 0, maximum: 1 }),
  result: Type.Union([ResultSchema, Type.Null()]),
  error: Type.Union(
    [
      Type.Object({
        code: Type.String({ description: 'NO_DATA: no bar of a symbol in the range (the message names the coverage that exists); WORKER_LOST, ENGINE_ERROR, …' }),
        message: Type.String(),
      }),
      Type.Null(),
    ],
    { description: '{code, message} when status is failed, else null' },
  ),
})
export type Job = Static<typeof JobSchema>

export const JobListQuerySchema = Type.Object(
  {
    status: Type.Optional(Type.Enum(JOB_STATUSES)),
    template_id: Type.Optional(Type.String({ pattern: '^([a-z0-9_]{1,64}|tpl-[0-9a-f]{16})$' })),
    from: Type.Optional(UtcTime('Lower bound of submitted_at, inclusive')),
    to: Type.Optional(UtcTime('Upper bound of submitted_at, exclusive')),
    limit: PageLimit(100, 20),
    cursor: Cursor,
  },
  { additionalProperties: false },
)
export type JobListQuery = Static<typeof JobListQuerySchema>

export const JobPageSchema = Type.Object({ data: Type.Array(JobSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) })

/** Routes without query parameters refuse any, as every route refuses unknown fields. */
export const NoQuerySchema = Type.Object({}, { additionalProperties: false })

export const JobIdSchema = Type.Object({ id: Type.String({ maxLength: 64 }) })

/** Optional body: a request without one is treated as {} (see routes.ts). */
export const CancelSchema = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 200, description: 'At most 200 characters, recorded for audit' })) },
  { additionalProperties: false },
)
export type CancelBody = Static<typeof CancelSchema>

export const CoverageQuerySchema = Type.Object(
  {
    symbol: Type.String({ pattern: SYMBOL_PATTERN, description: 'Uppercase symbol, e.g. BTCUSDT' }),
    timeframe: Type.Enum(TIMEFRAMES),
  },
  { additionalProperties: false },
)
export type CoverageQuery = Static<typeof CoverageQuerySchema>

const CoverageTime = (description: string) => Type.Union([IsoTimestamp, Type.Null()], { description })

export const CoverageSchema = Type.Object({
  symbol: Type.String(),
  timeframe: Type.Enum(TIMEFRAMES),
  start: CoverageTime("The first bar's open time; null when the exchange has no bar"),
  end: CoverageTime("The last closed bar's close time, by the exchange's clock; null when the exchange has no bar"),
})
