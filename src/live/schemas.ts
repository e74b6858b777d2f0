import { type Static, Type } from 'typebox'
import { Cursor, IsoTimestamp, PageLimit } from '../http/common-schemas.js'

/** A signed decimal as a string (PnL, funding and targets can be negative). */
const DecimalString = Type.String({ description: 'decimal string', examples: ['-12.5'] })

const Nullable = <T extends import('typebox').TSchema>(schema: T, options: { description?: string } = {}) => Type.Union([schema, Type.Null()], options)

export const HistoryQuerySchema = Type.Object({ limit: PageLimit(100, 20), cursor: Cursor }, { additionalProperties: false })
export type HistoryQuery = Static<typeof HistoryQuerySchema>

export const StreamQuerySchema = Type.Object(
  { ticket: Type.Optional(Type.String({ maxLength: 512, pattern: '^[A-Za-z0-9._-]*$', description: 'A one-time ticket from POST /v1/strategies/{id}/stream-ticket (browsers), instead of signature headers' })) },
  { additionalProperties: false },
)

export const StrategyOrderSchema = Type.Object({
  client_order_id: Type.String({ description: 'pp-<strategy hex>-<run>-<intent>: the id the order is (or would be) sent under' }),
  run: Type.Integer({ description: 'The deploy this order belongs to (1, 2, … per strategy)' }),
  symbol: Type.String(),
  status: Type.Union([Type.Literal('new'), Type.Literal('filled'), Type.Literal('skipped'), Type.Literal('cancelled')], {
    description:
      'new: intent recorded, not filled yet; skipped: below the minimum quantity or notional, or held flat after a protective exit until the strategy states another target; cancelled: dropped by a pause',
  }),
  reduce_only: Type.Boolean(),
  target: Nullable(DecimalString),
  side: Nullable(Type.Union([Type.Literal('buy'), Type.Literal('sell')]), {
    description: "The fill's; while new, what the order will send, sized at the close that stated it (null: it states no change there)",
  }),
  qty: Nullable(DecimalString, { description: "The fill's quantity; while new, the quantity it will send, sized at the close that stated it" }),
  price: Nullable(DecimalString),
  fee: Nullable(DecimalString),
  created_at: IsoTimestamp,
  filled_at: Nullable(IsoTimestamp),
  stated_at: Nullable(IsoTimestamp, {
    description:
      "The exchange's clock, as filled_at: the close time of the bar whose close stated this order (a protective exit's: its fill). created_at is our server's. Null for a pause's close (no bar states it)",
  }),
  exit_reason: Nullable(
    Type.Union([Type.Literal('stop_loss'), Type.Literal('take_profit'), Type.Literal('trailing_stop')], {
      description: "A dry run's protective exit (a reduce-only market close of the whole position, target 0): which level it was; null for the strategy's own orders",
    }),
  ),
})
export type StrategyOrder = Static<typeof StrategyOrderSchema>

export const StrategyTradeSchema = Type.Object({
  id: Type.Integer({ description: 'Numbered per strategy across runs, in the order trades closed' }),
  run: Type.Integer(),
  symbol: Type.String(),
  side: Type.Union([Type.Literal('buy'), Type.Literal('sell')], { description: 'buy: a long position; sell: a short one' }),
  qty: DecimalString,
  entry_time: IsoTimestamp,
  entry_price: DecimalString,
  exit_time: IsoTimestamp,
  exit_price: DecimalString,
  fee: DecimalString,
  funding: DecimalString,
  pnl: DecimalString,
  exit_reason: Type.String({
    description:
      "signal; liquidation (the engine, or the exchange: autoclose-…); adl (the exchange auto-deleveraged the position); stop_loss, take_profit, trailing_stop (a protective exit: the strategy's exits or a level its module stated; dry runs fill them as a backtest does)",
  }),
})
export type StrategyTrade = Static<typeof StrategyTradeSchema>

export const OrderPageSchema = Type.Object({ data: Type.Array(StrategyOrderSchema), next_cursor: Nullable(Type.String()) })
export const TradePageSchema = Type.Object({ data: Type.Array(StrategyTradeSchema), next_cursor: Nullable(Type.String()) })

export const StreamTicketSchema = Type.Object({
  ticket: Type.String({ description: 'Pass as ?ticket= on GET /v1/strategies/{id}/stream; valid once, for 30 s' }),
  expires_at: IsoTimestamp,
})

export const StreamMessageSchema = Type.Object({
  type: Type.Union(['status', 'order', 'position_opened', 'position_closed', 'error'].map((t) => Type.Literal(t)), {
    description:
      'status: {status, deployed_at, stats, last_error, mode, exchange_key, last_bar_at} as GET /v1/strategies/{id}; order: a fill (a protective exit\'s carries exit_reason); position_opened / position_closed: the data of the strategy.* events (position_closed with exit_reason); error: {strategy_id, code, message}',
  }),
  strategy_id: Type.String(),
  time: IsoTimestamp,
  data: Type.Record(Type.String(), Type.Unknown()),
})

export const ProtectiveOrderSchema = Type.Object({
  kind: Type.Union([Type.Literal('stop_loss'), Type.Literal('take_profit'), Type.Literal('trailing_stop'), Type.Literal('other')], {
    description: "What the order protects against, from its clientAlgoId (pa-<strategy hex>-<s|t|r><seq>: the run's stop, target or trailing stop); other: a conditional order on the symbol the run did not place",
  }),
  type: Type.String({ description: "Binance's orderType: STOP_MARKET, TAKE_PROFIT_MARKET, TRAILING_STOP_MARKET, …" }),
  side: Type.Union([Type.Literal('buy'), Type.Literal('sell')], { description: 'The side the order closes with: sell for a long position, buy for a short one' }),
  trigger_price: Nullable(Type.String({ description: 'Where it triggers, at the tick; null for a trailing stop (activate_price and callback_rate say where it starts and how far it follows)' })),
  working_type: Type.String({ description: "What price it triggers on: CONTRACT_PRICE (the last price; exits.trigger last) or MARK_PRICE (exits.trigger mark)" }),
  close_position: Type.Boolean({ description: 'true: closes whatever the position is when it triggers (no quantity)' }),
  reduce_only: Type.Boolean(),
  quantity: Nullable(Type.String({ description: 'What it closes, at the step size; null for a close_position order' })),
  activate_price: Nullable(Type.String({ description: 'A trailing stop: where trailing starts, at the tick; null for immediately or another type' })),
  callback_rate: Nullable(Type.String({ description: 'A trailing stop: how far behind the best price it follows, in percent (Binance: 0.1–20)' })),
  status: Type.String({ description: "Binance's algoStatus: NEW while it rests untriggered, TRIGGERING while its child order goes out" }),
  algo_id: Type.Integer({ description: "Binance's algoId" }),
  client_algo_id: Type.String(),
})
export type ProtectiveOrder = Static<typeof ProtectiveOrderSchema>

export const StrategyPositionSchema = Type.Object({
  symbol: Type.String(),
  side: Type.Union([Type.Literal('buy'), Type.Literal('sell')], { description: 'buy: a long position; sell: a short one' }),
  qty: Type.String({ description: 'Absolute quantity, at the symbol\'s step size' }),
  entry_price: DecimalString,
  mark_price: Nullable(Type.String({ description: 'The last close the run saw, at the tick; null before it saw one' })),
  unrealized_pnl: Nullable(Type.String({ description: 'qty × (mark − entry), signed, at most 8 decimals' })),
  liquidation_price: Nullable(Type.String({ description: 'Isolated margin at the symbol\'s tiers, at the tick; null when unreachable' })),
  opened_at: Nullable(IsoTimestamp),
  mode: Type.Union([Type.Literal('live'), Type.Literal('dry_run')]),
  stop_price: Nullable(Type.String({ description: "The stop-loss level protecting the position now (the module's stop_price, else the exits' stop_loss from the entry price), at the tick; null for none" })),
  take_profit_price: Nullable(Type.String({ description: "The take-profit level protecting the position now (the module's, else the exits'), at the tick; null for none" })),
  trailing: Nullable(
    Type.Object(
      {
        activation_price: Nullable(Type.String({ description: 'Where trailing starts (exits.trailing_activation in favour of the entry price), at the tick; null without activation' })),
        best_price: Nullable(Type.String({ description: 'The best price since entry (or activation): the high for a long, the low for a short; null before activation' })),
        stop_price: Nullable(Type.String({ description: 'The trailing stop now: best_price less the callback (exits.trailing_stop), at the tick; null before activation' })),
      },
      { description: "The trailing stop's state; null when the run's exits have none" },
    ),
  ),
  trigger: Nullable(
    Type.Union([Type.Literal('last'), Type.Literal('mark')], { description: 'Which price the levels trigger on; null when nothing but the liquidation price protects the position' }),
  ),
  protective_orders: Nullable(
    Type.Array(ProtectiveOrderSchema, {
      description:
        "A live position: the conditional orders resting on the exchange for its symbol now (GET /fapi/v1/openAlgoOrders), which close it even while Perpetua is down; [] when none rests. null for a dry run (its levels above are simulated) and when the exchange could not be read (protective_orders_error says why)",
    }),
  ),
  protective_orders_error: Nullable(Type.String({ description: "Why the exchange's protective orders could not be read (a live run only); null otherwise" })),
})
export type StrategyPosition = Static<typeof StrategyPositionSchema>
export const PositionListSchema = Type.Array(StrategyPositionSchema)
