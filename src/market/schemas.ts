import { type Static, Type } from 'typebox'
import { PERIODS } from './upstream-requests.js'

/**
 * Binance's symbols: uppercase letters and digits (1000PEPEUSDT), an underscore in delivery contracts
 * (BTCUSDT_250627). At least one letter: an all-digit value is never a symbol. Lowercase is accepted
 * and read as uppercase (see `symbolOf`).
 */
export const SymbolSchema = Type.String({
  minLength: 2,
  maxLength: 32,
  pattern: '^[A-Za-z0-9_]*[A-Za-z][A-Za-z0-9_]*$',
  description: 'Futures symbol, e.g. BTCUSDT (lowercase is read as uppercase)',
})

/** The symbol as the exchange names it. */
export function symbolOf(value: string): string {
  return value.toUpperCase()
}

/** Unix ms up to the year 9999: larger values are typos, not times. */
export const UnixMs = (description: string) => Type.Integer({ minimum: 0, maximum: 253_402_300_799_999, description })

export const SymbolPathSchema = Type.Object({ symbol: SymbolSchema }, { additionalProperties: false })

/** For routes without query parameters: an unexpected one is refused (docs/decisions/http.md, "Unknown fields are refused everywhere"). */
export const NoQuerySchema = Type.Object({}, { additionalProperties: false })

const PeriodSchema = Type.Enum(PERIODS, { default: '5m', description: 'Interval of the series; default 5m' })
const RatioLimitSchema = Type.Integer({ minimum: 1, maximum: 500, default: 10, description: 'Points, newest last; 1 to 500, default 10' })

export const RatioQuerySchema = Type.Object(
  {
    symbol: SymbolSchema,
    period: Type.Optional(PeriodSchema),
    limit: Type.Optional(RatioLimitSchema),
    startTime: Type.Optional(UnixMs('Unix ms, inclusive; passed to the exchange')),
    endTime: Type.Optional(UnixMs('Unix ms, inclusive; passed to the exchange')),
  },
  { additionalProperties: false },
)
export type RatioQuery = Static<typeof RatioQuerySchema>

export const RatioPathQuerySchema = Type.Object({ period: Type.Optional(PeriodSchema), limit: Type.Optional(RatioLimitSchema) }, { additionalProperties: false })
export type RatioPathQuery = Static<typeof RatioPathQuerySchema>

const Str = (description?: string) => Type.String(description ? { description } : {})

export const TickerRowSchema = Type.Object({
  symbol: Str(),
  priceChange: Str(),
  priceChangePercent: Str(),
  weightedAvgPrice: Str(),
  lastPrice: Str(),
  lastQty: Str(),
  openPrice: Str(),
  highPrice: Str(),
  lowPrice: Str(),
  volume: Str('Base-asset volume over 24 h'),
  quoteVolume: Str('Quote-asset volume over 24 h'),
  openTime: Type.Integer(),
  closeTime: Type.Integer(),
  firstId: Type.Integer(),
  lastId: Type.Integer(),
  count: Type.Integer(),
})
export type TickerRow = Static<typeof TickerRowSchema>

export const FundingRateSchema = Type.Object({
  symbol: Str(),
  fundingRate: Str('The funding rate of the current period (Binance lastFundingRate)'),
  markPrice: Str(),
  indexPrice: Str(),
  interestRate: Str(),
  nextFundingTime: Type.Integer({ description: 'Unix ms of the next funding' }),
  time: Type.Integer({ description: 'Unix ms of these values' }),
  fundingIntervalHours: Type.Union([Type.Integer(), Type.Null()], {
    description: "Hours between fundings: the symbol's own (Binance fundingInfo: 4 or 1 for many symbols), else 8; null when the exchange's funding info could not be read",
  }),
  annualizedRate: Type.Union([Type.String(), Type.Null()], {
    description: 'fundingRate × fundingIntervals per year (365 × 24 / fundingIntervalHours), simple, not compounded; positive: longs pay shorts',
  }),
})
export type FundingRate = Static<typeof FundingRateSchema>
/** A row as parsed from the premium index, before the funding interval is known. */
export type PremiumFundingRow = Omit<FundingRate, 'fundingIntervalHours' | 'annualizedRate'>

export const FundingHistoryRowSchema = Type.Object({
  symbol: Str(),
  fundingTime: Type.Integer({ description: 'Unix ms' }),
  fundingRate: Str(),
  markPrice: Str('Mark price at the funding time; empty where the exchange recorded none (before late 2023)'),
})
export type FundingHistoryRow = Static<typeof FundingHistoryRowSchema>

export const FundingHistoryQuerySchema = Type.Object(
  {
    start_time: Type.Optional(UnixMs('Inclusive lower bound of fundingTime, Unix ms')),
    end_time: Type.Optional(UnixMs('Inclusive upper bound of fundingTime, Unix ms')),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: '1 to 1000, default 100' })),
  },
  { additionalProperties: false },
)
export type FundingHistoryQuery = Static<typeof FundingHistoryQuerySchema>

export const PositionRatioRowSchema = Type.Object({
  symbol: Str(),
  longShortRatio: Str('longPosition / shortPosition'),
  longPosition: Str('Share of top traders’ open positions that is long'),
  shortPosition: Str('Share of top traders’ open positions that is short'),
  timestamp: Type.Integer({ description: 'Unix ms' }),
})
export type PositionRatioRow = Static<typeof PositionRatioRowSchema>

export const AccountRatioRowSchema = Type.Object({
  symbol: Str(),
  longShortRatio: Str('longAccount / shortAccount'),
  longAccount: Str('Share of top-trader accounts that are net long'),
  shortAccount: Str('Share of top-trader accounts that are net short'),
  timestamp: Type.Integer({ description: 'Unix ms' }),
})
export type AccountRatioRow = Static<typeof AccountRatioRowSchema>

/** The exchange's own row, forwarded unchanged by the mirror endpoints. */
export const UpstreamRatioRowSchema = Type.Object(
  {
    symbol: Str(),
    longShortRatio: Str(),
    longAccount: Type.Optional(Str()),
    shortAccount: Type.Optional(Str()),
    timestamp: Type.Union([Type.Integer(), Type.String()]),
  },
  { additionalProperties: true },
)

/** The position series' row on /topLongShortPositionRatio: the exchange's fields plus the spec's position shares. */
export const UpstreamPositionRatioRowSchema = Type.Object(
  {
    ...UpstreamRatioRowSchema.properties,
    longPosition: Str('Share of top traders’ open positions that is long (Binance USD-M’s longAccount of this series)'),
    shortPosition: Str('Share of top traders’ open positions that is short (Binance USD-M’s shortAccount of this series)'),
  },
  { additionalProperties: true },
)

export const ActiveTickerQuerySchema = Type.Object(
  {
    min_quote_volume: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1e15, default: 100_000_000, description: 'Minimum 24h quote volume; default 100000000' }),
    ),
  },
  { additionalProperties: false },
)
export type ActiveTickerQuery = Static<typeof ActiveTickerQuerySchema>

export const MirrorFundingQuerySchema = Type.Object(
  {
    symbol: Type.Optional(SymbolSchema),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 500, description: '1 to 1000, default 500' })),
    startTime: Type.Optional(UnixMs('Unix ms, inclusive')),
    endTime: Type.Optional(UnixMs('Unix ms, inclusive')),
  },
  { additionalProperties: false },
)
export type MirrorFundingQuery = Static<typeof MirrorFundingQuerySchema>

export { DetailSchema, ValidationErrorSchema } from '../http/common-schemas.js'
