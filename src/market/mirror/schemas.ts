import { Type } from 'typebox'
import { SymbolSchema, UnixMs } from '../schemas.js'
import { KLINE_INTERVALS, PERIODS } from '../upstream-requests.js'

/** Query schemas of the mirror endpoints we add beyond the spec: Binance's parameters, names and limits. */

export const OptionalSymbolQuerySchema = Type.Object(
  { symbol: Type.Optional(SymbolSchema) },
  { additionalProperties: false, description: 'One symbol’s row; every symbol’s when omitted' },
)

export const SymbolQuerySchema = Type.Object({ symbol: SymbolSchema }, { additionalProperties: false })

const StartTime = Type.Optional(UnixMs('Unix ms, inclusive'))
const EndTime = Type.Optional(UnixMs('Unix ms, inclusive'))

export const KlinesQuerySchema = Type.Object(
  {
    symbol: SymbolSchema,
    interval: Type.Enum(KLINE_INTERVALS),
    startTime: StartTime,
    endTime: EndTime,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1500, default: 500, description: '1 to 1500, default 500' })),
  },
  { additionalProperties: false },
)

export const FuturesDataQuerySchema = Type.Object(
  {
    symbol: SymbolSchema,
    period: Type.Enum(PERIODS),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 30, description: '1 to 500, default 30' })),
    startTime: StartTime,
    endTime: EndTime,
  },
  { additionalProperties: false },
)

/** The exchange's JSON, forwarded unchanged (its rows and fields are Binance's own). */
export const ExchangeAnswerSchema = Type.Unknown({ description: 'The exchange’s answer, unchanged' })
export const ExchangeRowsSchema = Type.Array(Type.Object({}, { additionalProperties: true }), { description: 'The exchange’s rows, unchanged' })
/** Klines are arrays, not objects: documented as such, typed clients (the dashboard's price chart) read them. */
export const KlineRowsSchema = Type.Array(Type.Array(Type.Union([Type.Integer(), Type.String()]), { minItems: 12, maxItems: 12 }), {
  description: 'The exchange’s klines, unchanged: [open time (ms), open, high, low, close, volume, close time (ms), quote volume, trades, taker buy base volume, taker buy quote volume, ignore]',
})
