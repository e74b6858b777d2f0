import { type Static, type TProperties, Type } from 'typebox'

/**
 * The body-credential endpoints (spec Authentication, pattern 3): every body carries the caller's
 * Binance key pair, used to sign one upstream request and never stored.
 */
const Credentials = {
  api_key: Type.String({ minLength: 1, maxLength: 256, description: 'Your Binance API key; used for this request only, never stored or logged.' }),
  api_secret: Type.String({ minLength: 1, maxLength: 256, description: 'Your Binance API secret; used to sign this request only, never stored or logged.' }),
}

const Symbol = Type.String({ pattern: '^[A-Z0-9]{1,30}$', description: 'Uppercase USD-M symbol, e.g. BTCUSDT' })
const Decimal = Type.String({ pattern: '^(0|[1-9]\\d{0,17})(\\.\\d{1,12})?$', description: 'A positive decimal as a string' })
/** Binance's newClientOrderId charset and length. */
const ClientOrderId = Type.String({ pattern: '^[.A-Z:/a-z0-9_-]{1,36}$' })

function body<P extends TProperties>(properties: P) {
  return Type.Object({ ...Credentials, ...properties }, { additionalProperties: false })
}

export const PlaceOrderSchema = body({
  symbol: Symbol,
  side: Type.Union([Type.Literal('BUY'), Type.Literal('SELL')]),
  type: Type.Union([Type.Literal('MARKET'), Type.Literal('LIMIT')]),
  quantity: Decimal,
  price: Type.Optional(Decimal),
  time_in_force: Type.Optional(Type.Union([Type.Literal('GTC'), Type.Literal('IOC'), Type.Literal('FOK'), Type.Literal('GTX')])),
  reduce_only: Type.Optional(Type.Boolean()),
  client_order_id: Type.Optional(ClientOrderId),
})
export type PlaceOrder = Static<typeof PlaceOrderSchema>

export const CancelOrderSchema = body({
  symbol: Symbol,
  order_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  client_order_id: Type.Optional(ClientOrderId),
})
export type CancelOrder = Static<typeof CancelOrderSchema>

export const SymbolBodySchema = body({ symbol: Symbol })
export type SymbolBody = Static<typeof SymbolBodySchema>

export const OptionalSymbolBodySchema = body({ symbol: Type.Optional(Symbol) })
export type OptionalSymbolBody = Static<typeof OptionalSymbolBodySchema>

export const CredentialsBodySchema = body({})
export type CredentialsBody = Static<typeof CredentialsBodySchema>

export const LeverageSchema = body({ symbol: Symbol, leverage: Type.Integer({ minimum: 1, maximum: 125 }) })
export type Leverage = Static<typeof LeverageSchema>

export const MarginTypeSchema = body({ symbol: Symbol, margin_type: Type.Union([Type.Literal('ISOLATED'), Type.Literal('CROSSED')]) })
export type MarginType = Static<typeof MarginTypeSchema>

/** The exchange's answer, passed through in Binance's own shape. */
export const ExchangeAnswerSchema = Type.Unknown({ description: "The exchange's answer, unchanged (Binance's field names and types)." })

export const ExchangeRejectionSchema = Type.Object(
  {
    detail: Type.String({ description: "The exchange's message" }),
    code: Type.Optional(Type.Integer({ description: "Binance's error code, e.g. -2019" })),
    msg: Type.Optional(Type.String({ description: "Binance's message, e.g. 'Margin is insufficient.'" })),
  },
  { description: "The exchange refused the request (its code and msg, as Binance sent them), or the fields contradict each other (detail only)." },
)

export const ExchangeFailureSchema = Type.Object(
  {
    detail: Type.String(),
    client_order_id: Type.Optional(Type.String({ description: "An order whose outcome is unknown: query it by this id before placing it again." })),
  },
  { description: 'The exchange failed, or the outcome of an order is unknown.' },
)
