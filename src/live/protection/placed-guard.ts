import { ExitGuard } from '../../engine/exit-guard.js'
import type { BarSeries } from '../../engine/types.js'

/**
 * A live run's protective exits: the engine's ExitGuard keeps the levels (from the run's exits at each
 * entry, and the module's stated levels), the target in force and the latch exactly as in a backtest, but
 * never exits a position itself: the levels rest on the exchange, which triggers them (DESIGN §10), and the
 * triggered order's fill is booked from the exchange (LiveOrders). So no open is checked and no bar is
 * walked; a bar is only checked against the ledger's liquidation price, as a run without exits is.
 * The levels a module states at a close are applied when the run's order of that close is booked
 * (`applyPending`, from ProtectiveOrders), not at the next bar: the exchange must hold them from the fill on.
 */
export class PlacedGuard extends ExitGuard {
  override atOpen(): void {}

  override walk(s: number, series: BarSeries, i: number): void {
    const q = this.ledger.qty[s]!
    const liq = this.ledger.liq[s]!
    if (q !== 0 && (q > 0 ? series.low[i]! <= liq : series.high[i]! >= liq)) this.ledger.liquidate(s, series.openTime[i]! + this.intervalMs - 1)
  }
}
