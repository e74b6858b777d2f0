import { feeTiersMarkdown } from './fees.js'

/** How the engine computes a result, in Markdown, for the OpenAPI description of a backtest result. */
export const ENGINE_SEMANTICS = `**How a backtest is computed** (deterministic: the same request always gives the same result).

*Bars and signals.* Only bars with start ≤ open_time ≤ end are used; indicators warm up inside that range (nothing from before start). A template decides when a bar closes; its order fills at the **next bar's open** as a market (taker) order. A decision on the last bar is never filled.

*Sizing.* A template states its target position as a signed fraction of equity in [−1, 1]. At the fill the engine computes qty = floor to the symbol's stepSize of (equity × leverage × |fraction|) / (open × (1 + taker fee rate)), where equity is the cash (wallet balance) after any funding settled at that bar and after closing the position the order closes or reverses. A resize in the same direction, and every leg of a many-symbol rebalance, also counts the unrealized PnL of open positions at that open (many-symbol legs are all sized from the account equity before the step's fills). The position also stays within the notional the leverage tiers allow at the chosen leverage. An opening or resizing order below the symbol's minQty or minNotional is skipped; closing a whole position is always allowed (reduce-only). Reversals close the old position and open the new one at the same open.

*Fees.* Every fill pays notional × rate. fee_model none: 0. fixed_bps: fee_bps / 10 000 per fill (default 5 bps). tiered_maker_taker and match_exchange: Binance USDⓈ-M VIP 0, maker 2 bps and taker 5 bps; all fills are taker fills.

${feeTiersMarkdown()}

*Funding.* Each recorded funding event (time T, rate r) settles at the open of the bar with open_time ≤ T < open_time + interval, before that bar's fills: cash −= signed_qty × mark × r, where mark is the event's recorded markPrice, else that bar's open. Longs pay positive rates, shorts receive them. An event falling in a gap of the bars settles at the first bar after the gap.

*Isolated margin and liquidation.* Leverage 1..20. A position's isolated margin is its entry notional / leverage, less the funding it paid. It is liquidated when its margin balance (margin + unrealized PnL) falls to its maintenance margin (notional × rate − maintenance amount of Binance's leverage tier), i.e. at the liquidation price LP = (margin + cum − side × qty × entry) / (qty × rate − side × qty), rounded to the tick on the trader's side of caution. Each bar checks the open (before fills, for positions carried in) and then its low (longs) or high (shorts) against LP; a liquidation fills at LP with the taker fee and is recorded as a trade with exit_reason liquidation, stamped at the bar's close time (open_time + interval − 1 ms), or at its open time when the open itself was past LP. A gap through LP still fills at LP: as on the exchange, an isolated position cannot lose more than its margin.

*End of the run.* Positions still open are marked at the last close and not closed: they are not in trades, they are reported as open positions, and they are included in the final equity.

*Trades.* A trade is a round trip from flat to flat: side (buy = long, sell = short), symbol, entry and exit time (fill bar open times), volume-weighted entry and exit price, qty, fee (entry + exit), funding paid while open, and pnl net of fees and funding.

*Equity curve and metrics.* The curve is daily UTC: the first point is the capital at start, then the equity (positions marked at the last close) at every UTC midnight, then the end of the last bar. Metrics use its daily simple returns, risk-free 0, 365 days a year: sharpe = mean / std (ddof 1) × √365; sortino = mean × 365 / (√(mean over all days of min(r, 0)²) × √365) (empyrical's downside deviation); max_drawdown = largest fall from a running peak, a negative fraction; cagr = (final / capital)^(365 / calendar days) − 1; calmar = cagr / |max_drawdown|. win_rate, profit_factor (gross profit / gross loss) and expected_value (mean pnl) are over closed trades, net of fees and funding; total_trades; avg_trade_duration_seconds. A metric that is undefined (no trades, no losing trade, zero deviation, no drawdown) is null, never a sentinel number.

*Gaps.* Missing bars (open times on the interval grid with no kline) are reported in gaps and never filled: no fills, funding or liquidation checks happen inside a gap.`
