import { type Static, Type } from 'typebox'
import { JOB_STATUSES, JobConfigSchema, JobCreateSchema, MetricsSchema } from '../backtests/schemas.js'
import { Cursor, IsoTimestamp, PageLimit } from '../http/common-schemas.js'

/** At most this many configurations in one sweep (issue 23 "Limits"). */
export const MAX_CONFIGURATIONS = 10_000

/** The result metrics a sweep may rank by; higher is better for each (max_drawdown is a negative fraction). */
export const OBJECTIVES = ['sharpe', 'sortino', 'calmar', 'cagr', 'max_drawdown', 'win_rate', 'profit_factor', 'expected_value', 'total_trades'] as const
export type Objective = (typeof OBJECTIVES)[number]

/** A template param, or a protective exit of the base's exits (exits.stop_loss, …; judged in swept-exits.ts). */
const ParamName = Type.String({ pattern: '^([A-Za-z_][A-Za-z0-9_]{0,63}|exits\\.[a-z_]{1,32})$' })
const ExitFraction = Type.String({ maxLength: 40, description: 'An exits.* fraction as a decimal string, e.g. "0.02"' })
const ParamValue = Type.Union([Type.Number(), Type.Boolean(), ExitFraction])
const RangeBound = Type.Union([Type.Number(), ExitFraction])
const EXITS_SWEPT =
  'Keys exits.stop_loss, exits.take_profit, exits.trailing_stop and exits.trailing_activation sweep that field of base.exits (numbers or decimal strings; each configuration\'s exits checked as a job\'s), and show in each run\'s params under the same key.'

const GridSchema = Type.Record(ParamName, Type.Array(ParamValue, { minItems: 1, maxItems: MAX_CONFIGURATIONS }), {
  minProperties: 1,
  maxProperties: 16,
  description: `{param: [values…]}: the cartesian product, the last param varying fastest. ${EXITS_SWEPT}`,
})

const RangeSchema = Type.Object(
  {
    min: RangeBound,
    max: RangeBound,
    step: Type.Optional(Type.Number({ exclusiveMinimum: 0, description: 'Values min + k·step only' })),
  },
  { additionalProperties: false },
)

const RandomSchema = Type.Object(
  {
    samples: Type.Integer({ minimum: 1, maximum: MAX_CONFIGURATIONS }),
    seed: Type.Optional(Type.Integer({ minimum: 0, maximum: 2_147_483_647, description: 'Default 1; the same seed draws the same configurations' })),
    space: Type.Record(ParamName, RangeSchema, {
      minProperties: 1,
      maxProperties: 16,
      description: `Each param drawn uniformly from [min, max] (an integer param from its integers, or from min + k·step). ${EXITS_SWEPT}`,
    }),
  },
  { additionalProperties: false },
)

const WalkForwardSchema = Type.Object(
  {
    in_sample_days: Type.Integer({ minimum: 2, maximum: 3650 }),
    out_of_sample_days: Type.Integer({ minimum: 1, maximum: 3650 }),
    anchored: Type.Optional(Type.Boolean({ description: 'Default false: rolling in-sample windows; true: each starts at the first day' })),
  },
  { additionalProperties: false },
)

export const SweepCreateSchema = Type.Object(
  {
    base: JobCreateSchema,
    grid: Type.Optional(GridSchema),
    random: Type.Optional(RandomSchema),
    objective: Type.Optional(Type.Enum(OBJECTIVES, { description: 'The metric that picks the best run and each walk-forward window (default sharpe)' })),
    cscv_blocks: Type.Optional(Type.Integer({ minimum: 2, maximum: 20, multipleOf: 2, description: 'S of the PBO: even, default 16. C(S, S/2) × configurations may not exceed C(16, 8) × 10,000 (20 blocks: at most 696 configurations; 18: 2,647)' })),
    walk_forward: Type.Optional(WalkForwardSchema),
  },
  { additionalProperties: false },
)
export type SweepCreate = Static<typeof SweepCreateSchema>

export const SweepConfigSchema = Type.Object({
  base: JobConfigSchema,
  grid: Type.Optional(GridSchema),
  random: Type.Optional(RandomSchema),
  objective: Type.Enum(OBJECTIVES),
  cscv_blocks: Type.Integer(),
  walk_forward: Type.Optional(WalkForwardSchema),
  configurations: Type.Integer({ description: 'Configurations run (N of the statistics)' }),
  skipped: Type.Integer({ description: "Combinations the template's rule across params refuses (e.g. sma_cross fast ≥ slow), not run" }),
})
export type SweepConfig = Static<typeof SweepConfigSchema>

const RunParams = Type.Record(Type.String(), Type.Unknown(), {
  description: 'The template\'s params the run resolved to, and the swept exits it ran with under their grid keys (e.g. "exits.stop_loss": "0.02", a decimal string)',
})

const Nullable = (description: string) => Type.Union([Type.Number(), Type.Null()], { description })

export const SweepStatisticsSchema = Type.Object(
  {
    n_trials: Type.Integer({ description: 'N: the configurations run' }),
    observations: Type.Integer({ description: 'T: daily returns per configuration' }),
    sharpe_variance: Nullable('V: variance (ddof 1) of the runs’ per-observation Sharpe ratios'),
    expected_max_sharpe: Nullable('SR₀: the per-observation Sharpe the best of N skill-less trials is expected to reach'),
    psr: Nullable("The best run's Probabilistic Sharpe Ratio against 0"),
    dsr: Nullable("The best run's Deflated Sharpe Ratio (its PSR against SR₀)"),
    best_sharpe: Nullable("The best run's per-observation Sharpe"),
    best_skewness: Nullable("The best run's population skewness"),
    best_kurtosis: Nullable("The best run's raw kurtosis (3 for a normal)"),
    pbo: Type.Object({
      value: Nullable('Probability of Backtest Overfitting: the share of CSCV splits whose in-sample winner has a logit λ ≤ 0 out of sample'),
      combinations: Type.Integer({ description: 'C(S, S/2)' }),
      logit_mean: Nullable('Mean of λ'),
      logit_median: Nullable('Median of λ'),
      histogram: Type.Union([Type.Object({ edges: Type.Array(Type.Number()), counts: Type.Array(Type.Integer()) }), Type.Null()], { description: 'Histogram of λ: counts[i] between edges[i] and edges[i+1]' }),
      prob_oos_loss: Nullable('Share of splits whose in-sample winner has a negative out-of-sample Sharpe'),
      degradation_slope: Nullable("Least squares of the winner's out-of-sample on its in-sample Sharpe"),
      degradation_intercept: Nullable('Its intercept'),
      blocks: Type.Integer({ description: 'S' }),
      block_length: Type.Integer({ description: 'Rows per block, floor(T / S)' }),
      dropped_rows: Type.Integer({ description: 'The first T mod S rows, left out' }),
      reason: Type.Optional(Type.String({ description: 'Why value is null' })),
    }),
    reasons: Type.Record(Type.String(), Type.String(), { description: 'Why a null statistic is null, by field name' }),
  },
  { description: 'Computed from GET …/returns with the conventions of issue 23 (per-observation Sharpe, raw kurtosis, N = configurations, CSCV on S contiguous blocks)' },
)

const SliceMetricsSchema = Type.Object(
  {
    total_return: Type.Number(),
    cagr: Type.Union([Type.Number(), Type.Null()]),
    sharpe: Type.Union([Type.Number(), Type.Null()]),
    sortino: Type.Union([Type.Number(), Type.Null()]),
    max_drawdown: Type.Number(),
    calmar: Type.Union([Type.Number(), Type.Null()]),
    daily_profit_factor: Type.Union([Type.Number(), Type.Null()]),
    daily_win_rate: Type.Union([Type.Number(), Type.Null()]),
  },
  { description: "Metrics of a run of daily returns (Sharpe and Sortino per observation; trade counts are not in daily returns, so profit factor and win rate are the days')" },
)

const DaySpanSchema = Type.Object({ first_day: IsoTimestamp, last_day: IsoTimestamp, days: Type.Integer() })

export const WalkForwardResultSchema = Type.Object({
  objective: Type.String(),
  anchored: Type.Boolean(),
  windows: Type.Array(
    Type.Object({
      in_sample: DaySpanSchema,
      out_of_sample: DaySpanSchema,
      run_id: Type.String({ description: 'The configuration chosen in sample' }),
      params: RunParams,
      in_sample_metric: Type.Union([Type.Number(), Type.Null()], { description: 'Its objective in sample' }),
      in_sample_metrics: SliceMetricsSchema,
      out_of_sample_metrics: SliceMetricsSchema,
      efficiency: Type.Union([Type.Number(), Type.Null()], { description: 'Out-of-sample CAGR ÷ in-sample CAGR; null when that is ≤ 0' }),
    }),
  ),
  curve: Type.Array(Type.Tuple([IsoTimestamp, Type.Number()]), { description: 'The stitched out-of-sample equity from the capital: the day before the first window, then one point per day' }),
  metrics: Type.Union([SliceMetricsSchema, Type.Null()], { description: 'Of the stitched out-of-sample returns' }),
  in_sample_cagr: Type.Union([Type.Number(), Type.Null()]),
  efficiency: Type.Union([Type.Number(), Type.Null()], { description: "Pardo's walk-forward efficiency: stitched out-of-sample CAGR ÷ mean in-sample CAGR; null when that is ≤ 0" }),
  reason: Type.Optional(Type.String()),
})

export const SweepResultSchema = Type.Object({
  best: Type.Object({ run_id: Type.String(), params: RunParams, metrics: MetricsSchema }),
  statistics: SweepStatisticsSchema,
  walk_forward: Type.Optional(WalkForwardResultSchema),
})

const ErrorSchema = Type.Union(
  [Type.Object({ code: Type.String({ description: 'NO_DATA, WORKER_LOST, ENGINE_ERROR, STATISTICS_ERROR, …' }), message: Type.String() }), Type.Null()],
  { description: '{code, message} when status is failed, else null' },
)

export const SweepSchema = Type.Object({
  id: Type.String({ pattern: '^sw_[0-9a-f]{8}$' }),
  status: Type.Enum(JOB_STATUSES),
  progress: Type.Number({ minimum: 0, maximum: 1, description: 'Share of configurations run' }),
  config: SweepConfigSchema,
  submitted_at: IsoTimestamp,
  started_at: Type.Union([IsoTimestamp, Type.Null()]),
  finished_at: Type.Union([IsoTimestamp, Type.Null()]),
  result: Type.Union([SweepResultSchema, Type.Null()]),
  error: ErrorSchema,
})
export type Sweep = Static<typeof SweepSchema>

export const SweepListQuerySchema = Type.Object(
  {
    status: Type.Optional(Type.Enum(JOB_STATUSES)),
    limit: PageLimit(100, 20),
    cursor: Cursor,
  },
  { additionalProperties: false },
)
export type SweepListQuery = Static<typeof SweepListQuerySchema>

export const SweepPageSchema = Type.Object({ data: Type.Array(SweepSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) })

export const SweepIdSchema = Type.Object({ id: Type.String({ maxLength: 64 }) })

export const RunsQuerySchema = Type.Object(
  {
    sort: Type.Optional(Type.Enum(['run', 'objective'], { description: 'run (default): in run order; objective: best first, runs without a value last' })),
    limit: PageLimit(1000, 100),
    cursor: Cursor,
  },
  { additionalProperties: false },
)
export type RunsQuery = Static<typeof RunsQuerySchema>

export const SweepRunSchema = Type.Object({
  run_id: Type.String({ description: 'r1 … rN in configuration order; the columns of GET …/returns' }),
  params: RunParams,
  metrics: MetricsSchema,
  config: { ...JobConfigSchema, description: "The run as a backtest job's config (the base with this run's params and exits, its seed included): posted to POST /v1/backtest/jobs as it is, it gives these metrics" },
})
export type SweepRun = Static<typeof SweepRunSchema>

export const RunPageSchema = Type.Object({ data: Type.Array(SweepRunSchema), next_cursor: Type.Union([Type.String(), Type.Null()]) })

/** Columns one request of GET …/returns may name with run_ids. */
export const MAX_RETURN_COLUMNS = 100

/**
 * Columns one request of GET …/returns may read (a page): 1,000 columns of 5 years of daily returns are
 * 14.6 MB of numbers on the server and ~39 MB of text, written as the client reads it (issue 37).
 */
export const RETURN_PAGE_COLUMNS = 1000

export const ReturnsQuerySchema = Type.Object(
  {
    format: Type.Optional(Type.Enum(['json', 'csv'], { description: 'Overrides the Accept header' })),
    run_ids: Type.Optional(
      Type.String({
        description: `Only these runs' columns, in this order: run ids separated by commas (e.g. r12,r3), at most ${MAX_RETURN_COLUMNS}. A dashboard drawing the best run's equity reads one column instead of the whole matrix.`,
        maxLength: 1000,
      }),
    ),
    limit: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: RETURN_PAGE_COLUMNS,
        description: `Columns of this page, in run order (default and at most ${RETURN_PAGE_COLUMNS}). A sweep of more than ${RETURN_PAGE_COLUMNS} runs is read in pages: the answer's \`Link: <…>; rel="next"\` header gives the next page's URL (its cursor) until the last.`,
      }),
    ),
    cursor: Type.Optional(Type.String({ maxLength: 512, description: 'The next page of columns, from the Link rel="next" of the previous answer' })),
  },
  { additionalProperties: false },
)
export type ReturnsQuery = Static<typeof ReturnsQuerySchema>

export const ReturnsSchema = Type.Object({
  run_ids: Type.Array(Type.String(), { description: 'The columns, N' }),
  dates: Type.Array(IsoTimestamp, { description: 'The rows, T: the daily equity point each return ends on' }),
  returns: Type.Array(Type.Array(Type.Number()), { description: 'T rows of N returns r_t = E_t / E_{t−1} − 1' }),
})
