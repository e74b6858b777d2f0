import { type Static, Type } from 'typebox'
import { Cursor, DecimalString, IsoTimestamp, PageLimit } from '../http/common-schemas.js'
import { TIMEFRAMES } from './timeframes.js'
import { SYMBOL_PATTERN } from '../market/symbol-pattern.js'
import { ExitsSchema } from './exits.js'

export { TIMEFRAMES, TIMEFRAME_MS } from './timeframes.js'

export const STRATEGY_STATUSES = ['draft', 'deployed', 'paused', 'stopped', 'error'] as const

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  template_id: Type.String({ pattern: '^([a-z][a-z0-9_]{0,63}|tpl-[0-9a-f]{16})$', description: 'A built-in template slug (sma_cross) or your own template (tpl-…)' }),
  params: Type.Record(Type.String(), Type.Unknown(), { description: 'Template-specific parameters' }),
  symbols: Type.Array(Type.String({ pattern: SYMBOL_PATTERN }), {
    minItems: 1,
    maxItems: 50,
    uniqueItems: true,
    description: 'Uppercase futures symbols, e.g. BTCUSDT',
  }),
  timeframe: Type.Enum(TIMEFRAMES, { description: 'Bar interval' }),
  capital: DecimalString('Notional capital in quote currency; greater than 0'),
  leverage: Type.Integer({ minimum: 1, maximum: 20 }),
}

export const StrategyCreateSchema = Type.Object(
  {
    name: fields.name,
    template_id: fields.template_id,
    params: Type.Optional(fields.params),
    symbols: fields.symbols,
    timeframe: fields.timeframe,
    capital: fields.capital,
    leverage: Type.Optional({ ...fields.leverage, default: 1 }),
    exits: Type.Optional(ExitsSchema),
  },
  { additionalProperties: false },
)
export type StrategyCreate = Static<typeof StrategyCreateSchema>

export const StrategyPatchSchema = Type.Object(
  {
    name: Type.Optional(fields.name),
    template_id: Type.Optional(fields.template_id),
    params: Type.Optional(fields.params),
    symbols: Type.Optional(fields.symbols),
    timeframe: Type.Optional(fields.timeframe),
    capital: Type.Optional(fields.capital),
    leverage: Type.Optional(fields.leverage),
    template_version: Type.Optional(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'A custom template: move to this version (default: the latest when template_id changes)' })),
    exits: Type.Optional(Type.Union([ExitsSchema, Type.Null()], { description: 'Replaces the protective exits as a whole; null removes them' })),
  },
  { additionalProperties: false, minProperties: 1, description: 'Any subset of the creatable fields; refused while deployed.' },
)
export type StrategyPatch = Static<typeof StrategyPatchSchema>

export const StrategySchema = Type.Object({
  id: Type.String({ pattern: '^strat_[0-9a-f]{6,8}$' }),
  name: Type.String(),
  template_id: Type.String(),
  template_version: Type.Optional(Type.Integer({ description: 'A custom template only: the version this strategy runs (pinned)' })),
  params: Type.Record(Type.String(), Type.Unknown()),
  symbols: Type.Array(Type.String()),
  timeframe: Type.String(),
  capital: Type.String(),
  leverage: Type.Integer(),
  exits: Type.Union([ExitsSchema, Type.Null()], {
    description: 'Protective exits as stored, trigger spelled out; null for none. A dry run applies them as a backtest does; a live deploy of a strategy with exits is refused until they are placed on the exchange',
  }),
  status: Type.Enum(STRATEGY_STATUSES),
  deployed_at: Type.Union([IsoTimestamp, Type.Null()]),
  created_at: IsoTimestamp,
  updated_at: IsoTimestamp,
  stats: Type.Object({
    open_positions: Type.Integer(),
    total_pnl: Type.String(),
    total_trades: Type.Integer(),
    win_rate: Type.String({ description: 'Share of winning closed trades in [0, 1]' }),
  }),
  last_error: Type.Union(
    [
      Type.Object({
        code: Type.String({ description: 'Why the run stopped: POSITION_MISMATCH, KEY_REVOKED, MARGIN_REFUSED, START_FAILED, STRATEGY_ERROR, …' }),
        message: Type.String(),
        at: IsoTimestamp,
      }),
      Type.Null(),
    ],
    { description: 'Our addition: why the strategy moved into error; kept after the edit back to draft, cleared by the next deploy; null when none' },
  ),
  mode: Type.Union([Type.Literal('live'), Type.Literal('dry_run'), Type.Null()], {
    description: 'Our addition: the mode of the current run, or of the last one; null before the first deploy',
  }),
  exchange_key: Type.Union([Type.Object({ id: Type.String(), label: Type.Union([Type.String(), Type.Null()]) }), Type.Null()], {
    description: 'Our addition: the exchange key a live run trades (current or last run); null for a dry run or before the first deploy',
  }),
  last_bar_at: Type.Union([IsoTimestamp, Type.Null()], {
    description: 'Our addition: open time of the last closed bar the current (or last) run acted on; null before it acted on one',
  }),
})
export type Strategy = Static<typeof StrategySchema>

export const StrategyIdSchema = Type.Object({ id: Type.String({ maxLength: 64 }) })

export const StrategyListQuerySchema = Type.Object(
  {
    status: Type.Optional(Type.Enum(STRATEGY_STATUSES)),
    limit: PageLimit(100, 20),
    cursor: Cursor,
  },
  { additionalProperties: false },
)
export type StrategyListQuery = Static<typeof StrategyListQuerySchema>

export const StrategyPageSchema = Type.Object({ data: Type.Array(StrategySchema), next_cursor: Type.Union([Type.String(), Type.Null()]) })

export const DeployBodySchema = Type.Object(
  {
    capital: Type.Optional(Type.String({ description: 'Capital of this run only (decimal string); default: the stored capital' })),
    leverage: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: 'Leverage of this run only, 1 to 20; default: the stored leverage' })),
    dry_run: Type.Optional(Type.Boolean({ description: 'Trade the paper wallet on live market data, placing no real orders (default false)' })),
    exchange_key_id: Type.Optional(Type.String({ maxLength: 64, description: 'Our addition: the verified exchange key a live run trades; default: the newest verified one' })),
  },
  { additionalProperties: false },
)
export type DeployBody = Static<typeof DeployBodySchema>

export const PauseBodySchema = Type.Object(
  { close_positions: Type.Optional(Type.Boolean({ description: 'Close every open position with reduce-only market orders first (default false)' })) },
  { additionalProperties: false },
)
