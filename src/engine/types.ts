import type { MaintenanceBracket } from '../binance-formats/leverage-brackets.js'

/**
 * The engine's data model. Everything is float64 inside (typed arrays for series); decimal strings are
 * made at the API edge. Times are Unix epoch milliseconds, UTC.
 */

/** One symbol's klines, ascending by open time, no duplicates (gaps allowed: they are reported, never filled). */
export interface BarSeries {
  symbol: string
  /** The timeframe in milliseconds (60_000 for 1m … 86_400_000 for 1d). */
  intervalMs: number
  openTime: Float64Array
  open: Float64Array
  high: Float64Array
  low: Float64Array
  close: Float64Array
  volume: Float64Array
  /**
   * Quote-asset volume and number of trades (klines fields 7 and 8). The engine's rules never read them;
   * user strategies receive them. Optional: a series built without them gives NaN to a strategy.
   */
  quoteVolume?: Float64Array
  trades?: Float64Array
}

/** One symbol's funding history (GET /fapi/v1/fundingRate rows), ascending by time. */
export interface FundingSeries {
  time: Float64Array
  rate: Float64Array
  /** The mark price Binance recorded with the event; NaN where it recorded none (before 2023-10-31 for BTCUSDT). */
  markPrice: Float64Array
}

/** The exchange filters of one symbol that the engine applies (MARKET_LOT_SIZE, MIN_NOTIONAL, PRICE_FILTER, brackets). */
export interface SymbolRules {
  stepSize: number
  minQty: number
  minNotional: number
  tickSize: number
  /** Ascending by notionalFloor; the last tier's cap bounds the position size the engine will open. */
  brackets: readonly MaintenanceBracket[]
}

/** The fee rates the engine charges; every fill is a market (taker) order, so only takerRate is used today. */
export interface FeeRates {
  makerRate: number
  takerRate: number
}

/**
 * Protective exits of a run, as fractions of the position's average entry price (DESIGN §10). Levels are
 * recomputed whenever the position changes (entry, resize, reversal) and rounded to the tick away from
 * the price (never kinder than the fraction).
 */
export interface ExitRules {
  /** 0.02 = an exit 2 % against the position. */
  stopLoss?: number
  /** 0.05 = an exit 5 % in favour. */
  takeProfit?: number
  /** Callback fraction from the best price since entry (or since activation). */
  trailingStop?: number
  /** Trailing starts once the price is this fraction in favour; absent: from the entry. */
  trailingActivation?: number
  /** The price the levels are checked against: trades (last) or mark-price bars (DetailBars.mark). */
  trigger: 'last' | 'mark'
}

/**
 * One symbol's finer bars for protective exits. Several intervals may be given (1m, 5m, 15m, …), each a
 * BarSeries ascending on its own grid whose interval divides the strategy's. Per strategy bar the engine
 * examines the finest series that holds every bar inside it, else the strategy bar itself. A runner may
 * swap longer arrays into these series between steps (openTime.length bars each, no unused slots).
 */
export interface DetailBars {
  /** Last-price bars finer than the strategy's. */
  bars?: readonly BarSeries[]
  /** Mark-price bars, finer than or as long as the strategy's (trigger 'mark'). */
  mark?: readonly BarSeries[]
}

/** Why a trade closed. adl: the exchange auto-deleveraged it (live runs only; a backtest never does). */
export type ExitReason = 'signal' | 'liquidation' | 'adl' | 'stop_loss' | 'take_profit' | 'trailing_stop'

export const EXIT_REASONS: readonly ExitReason[] = ['signal', 'liquidation', 'adl', 'stop_loss', 'take_profit', 'trailing_stop']

/** A closed round trip, flat to flat (a reversal closes one trade and opens the next). */
export interface Trade {
  /** 1, 2, 3 … in order of exit. */
  id: number
  symbol: string
  /** buy = long, sell = short. */
  side: 'buy' | 'sell'
  /** Open time of the bar whose open filled the entry. */
  entryTime: number
  /** Volume-weighted average of the entry fills. */
  entryPrice: number
  /**
   * Open time of the filling bar; for a liquidation or protective exit inside a bar, the close time
   * (open + interval − 1 ms) of the bar it was found in (a finer bar when exits were resolved on one).
   */
  exitTime: number
  /** Volume-weighted average of the exit fills (the liquidation price for a liquidation). */
  exitPrice: number
  /** Total quantity entered (= total quantity exited). */
  qty: number
  /** Fees of every fill of the trade, entry and exit. */
  fee: number
  /** Funding paid while the trade was open (negative = received). */
  funding: number
  /** Net of fees and funding: side × qty × (exitPrice − entryPrice) − fee − funding. */
  pnl: number
  exitReason: ExitReason
}

/** A position still open at the end: marked at the last close, not closed, not in trades. */
export interface OpenPosition {
  symbol: string
  side: 'buy' | 'sell'
  entryTime: number
  /** Average entry price of the quantity held. */
  entryPrice: number
  qty: number
  markPrice: number
  /** side × qty × (markPrice − entryPrice). */
  unrealizedPnl: number
  /** PnL already realized by reducing the position (many-symbol rebalances), before fees and funding. */
  realizedPnl: number
  /** Fees paid so far by this position's fills. */
  fee: number
  funding: number
  liquidationPrice: number | null
}

/** Metrics per DESIGN §5; null where a metric is undefined (no trades, no losses, zero deviation), never a sentinel. */
export interface Metrics {
  sharpe: number | null
  sortino: number | null
  calmar: number | null
  /** A fraction ≤ 0 (−0.25 = a 25 % fall from a peak); 0 for a curve that never fell. */
  maxDrawdown: number
  winRate: number | null
  profitFactor: number | null
  cagr: number | null
  expectedValue: number | null
  totalTrades: number
  avgTradeDurationSeconds: number | null
  /** Closed trades per exit reason; only in runs with protective exits (ExitRules or a signal's levels). */
  exitReasons?: Record<ExitReason, number>
}

/** Missing klines: the open times of the first and last missing bar (both inclusive). */
export interface BarGap {
  symbol: string
  from: number
  to: number
}

/** A daily point of the equity curve: [time ms, equity]. */
export type EquityPoint = [number, number]

export interface BacktestResult {
  trades: Trade[]
  openPositions: OpenPosition[]
  /** Daily UTC: the first point is (start, capital), then one point per UTC midnight, then the end of the last bar. */
  equityCurve: EquityPoint[]
  metrics: Metrics
  /** Cash plus open positions marked at the last close. */
  finalEquity: number
  feesPaid: number
  /** Funding paid in total (negative = received). */
  fundingPaid: number
  gaps: BarGap[]
  /** Bars inside [start, end] over all symbols. */
  barsProcessed: number
  /** The template's params with defaults applied. */
  params: Record<string, unknown>
  /**
   * Runs with protective exits only: per symbol, how many strategy bars holding a protected position were
   * examined on which bars ('1m', '5m', … last-price; 'mark_1m', … mark-price; the strategy's own
   * timeframe when no finer series covered the bar).
   */
  exitResolution?: Record<string, Record<string, number>>
  /** Runs with protective exits only: examined bars whose range held a stop-side and a target-side level (the stop side was taken). */
  ambiguousExits?: { total: number; bySymbol: Record<string, number> }
}
