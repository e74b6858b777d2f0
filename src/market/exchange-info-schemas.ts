import { type Static, Type } from 'typebox'
import { SymbolSchema } from './schemas.js'

export const SYMBOL_STATUSES = ['trading', 'halt', 'post_only', 'break'] as const
export type SymbolStatus = (typeof SYMBOL_STATUSES)[number]

const Decimal = (description: string) => Type.String({ description })

/** The filters of the spec's table, exactly; the exchange's others (PERCENT_PRICE, …) are left out. */
export const FilterSchema = Type.Union([
  Type.Object({
    filterType: Type.Literal('PRICE_FILTER'),
    minPrice: Decimal('minPrice <= price'),
    maxPrice: Decimal('price <= maxPrice'),
    tickSize: Decimal('(price - minPrice) % tickSize == 0'),
  }),
  Type.Object({
    filterType: Type.Literal('LOT_SIZE'),
    minQty: Decimal('Limit orders: minQty <= qty'),
    maxQty: Decimal('qty <= maxQty'),
    stepSize: Decimal('(qty - minQty) % stepSize == 0'),
  }),
  Type.Object({
    filterType: Type.Literal('MARKET_LOT_SIZE'),
    minQty: Decimal('Market orders: minQty <= qty'),
    maxQty: Decimal('qty <= maxQty'),
    stepSize: Decimal('(qty - minQty) % stepSize == 0'),
  }),
  Type.Object({ filterType: Type.Literal('MIN_NOTIONAL'), minNotional: Decimal('price * qty >= minNotional, in the quote asset') }),
  Type.Object({ filterType: Type.Literal('MAX_NUM_ORDERS'), maxNumOrders: Type.Integer({ description: 'Open orders per account for the symbol' }) }),
])
export type Filter = Static<typeof FilterSchema>

export const ExchangeSymbolSchema = Type.Object({
  symbol: Type.String(),
  status: Type.Enum(SYMBOL_STATUSES, {
    description:
      'trading: maker and taker. halt: no new orders, existing frozen (exchange HALT, delivery and settlement states, CLOSE). ' +
      'post_only: only non-aggressive orders (AUCTION_MATCH). break: no order activity (PENDING_TRADING before listing, BREAK).',
  }),
  baseAsset: Type.String(),
  quoteAsset: Type.String(),
  pricePrecision: Type.Integer({ description: 'Maximum decimals in a price' }),
  quantityPrecision: Type.Integer({ description: 'Maximum decimals in a quantity' }),
  filters: Type.Array(FilterSchema),
})
export type ExchangeSymbol = Static<typeof ExchangeSymbolSchema>

export const ExchangeInfoSchema = Type.Object({
  serverTime: Type.Integer({ description: 'Unix ms of this answer' }),
  symbols: Type.Array(ExchangeSymbolSchema),
})
export type ExchangeInfo = Static<typeof ExchangeInfoSchema>

export const ExchangeInfoQuerySchema = Type.Object(
  { symbol: Type.Optional({ ...SymbolSchema, description: 'Only this symbol; all when omitted' }) },
  { additionalProperties: false },
)
export type ExchangeInfoQuery = Static<typeof ExchangeInfoQuerySchema>

export const PublicTradeSchema = Type.Object({
  id: Type.Integer({ description: 'Globally unique, increasing' }),
  price: Type.String(),
  qty: Type.String({ description: 'Base asset' }),
  quoteQty: Type.String({ description: 'price * qty' }),
  time: Type.Integer({ description: 'Unix ms' }),
  isBuyerMaker: Type.Boolean({ description: 'true when the buyer was the resting order' }),
})

export const TradesQuerySchema = Type.Object(
  {
    // Required (400 INVALID_PARAMETER when missing), checked by the handler so that a bad `limit` is
    // reported as the field at fault rather than the missing symbol TypeBox lists first.
    symbol: Type.Optional({ ...SymbolSchema, description: 'Required. Uppercase futures symbol, e.g. BTCUSDT' }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 500, description: '1 to 1000, default 500' })),
  },
  { additionalProperties: false },
)
export type TradesQuery = Static<typeof TradesQuerySchema>
