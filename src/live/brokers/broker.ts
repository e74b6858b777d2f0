import type { BarInput, FundingInput } from '../../engine/growing-series.js'
import type { ExitReason, Trade } from '../../engine/types.js'

/** A closed kline as a runner acts on it (parsed from the stream or REST at the market edge, both with quote volume and trades). */
export type ClosedBar = BarInput

/** A funding event as a run hears it; markPrice NaN when the exchange recorded none. */
export type FundingEvent = FundingInput

export interface Fill {
  side: 'buy' | 'sell'
  qty: number
  price: number
  fee: number
  time: number
}

/** A protective exit's fill: the whole position closed by its stop loss, take profit or trailing stop. */
export interface ExitFill extends Fill {
  reason: Extract<ExitReason, 'stop_loss' | 'take_profit' | 'trailing_stop'>
  /** A live run's: the exchange's client order id of the order that closed (a triggered protective order's child carries its clientAlgoId). */
  clientOrderId?: string | undefined
}

/** What one bar (or a close-all) did: fills, round trips closed, and the position after it. */
export interface BrokerOutcome {
  /** The order filled at this bar's open (the intent stated at the previous close), when there was one. */
  filledIntent: { fills: Fill[] } | undefined
  /** Liquidation fills, apart from the intent's. */
  liquidations: Fill[]
  /** Protective exits (a dry run's), apart from the intent's fills: each its own reduce-only order. */
  protectiveExits: ExitFill[]
  trades: Trade[]
  /** Signed quantity before and after, to tell position_opened apart. */
  qtyBefore: number
  qtyAfter: number
  entryPrice: number
  /** The template's new target at this close (NaN when it keeps the current one): an order intent to record. */
  newTarget: number
  fundingPaid: number
}

/**
 * Where a runner's decisions become positions. The paper broker (dry runs) is the engine's own
 * stepper; an exchange broker (live runs, not built yet) implements the same calls with signed orders,
 * reconciling before it trusts its state (research/live-trading.md §5).
 */
export interface Broker {
  readonly kind: 'paper' | 'exchange'
  /** Feeds warm-up history to the template only (no fills: its signal answers NaN by the warm-up contract). */
  warm(bars: readonly ClosedBar[], funding: readonly FundingEvent[]): void
  /** Acts on one closed bar, after every earlier one, with the funding events known up to its close. */
  onClosedBar(bar: ClosedBar, funding: readonly FundingEvent[]): BrokerOutcome
  /** Reduce-only market close of every position at `price` (pause with close_positions). */
  closeAll(price: number, time: number): BrokerOutcome
  /** State to save after each bar, so a resumed runner continues with the same position. */
  snapshot(): Record<string, unknown>
  /** Open time of the last bar acted on (NaN before the first). */
  readonly lastOpenTime: number
  readonly lastClose: number
  /** Realized net PnL and the position's unrealized PnL at `mark`. */
  totals(mark: number): { realized: number; unrealized: number; qty: number }
}
