import type { Ledger } from '../../engine/ledger.js'
import type { Trade } from '../../engine/types.js'
import type { ExitFill, Fill } from './broker.js'

/** A fill as a paper broker hears it from its ledger (onFill): its symbol, and how many round trips were closed before it. */
export interface HeardFill {
  s: number
  fill: Fill
  tradesBefore: number
}

/** What made a fill: the run's order (the intent), a liquidation, or a protective exit. */
export type FillKind = { kind: 'intent'; fill: Fill } | { kind: 'liquidation'; fill: Fill } | { kind: 'exit'; fill: ExitFill }

/** Listens to `ledger`'s fills into `into()` (the broker's current list), each with the round trips closed before it. */
export function hearFills(ledger: Ledger, into: () => HeardFill[]): void {
  ledger.onFill = (s, side, qty, price, fee) => into().push({ s, fill: { side, qty, price, fee, time: Number.NaN }, tradesBefore: ledger.trades.length })
}

/**
 * Tells each fill's kind. The ledger books a close as one fill followed by its round trip, so the closing
 * fill of trade j is the last fill heard while j trades were closed: a liquidation's or a protective exit's
 * close is theirs, timed at the trade's exit; every other fill is the intent's, timed `intentTime`. Matching
 * by price instead (as before exits) cannot tell a stop at the open from a new position opened there on the
 * same side at the same price.
 */
export function fillKinds(heard: readonly HeardFill[], trades: readonly Trade[], intentTime: number): FillKind[] {
  return heard.map(({ fill, tradesBefore }, k) => {
    const closing = tradesBefore < trades.length && heard[k + 1]?.tradesBefore !== tradesBefore
    const trade = closing ? trades[tradesBefore]! : undefined
    const reason = trade?.exitReason
    if (reason === 'liquidation') return { kind: 'liquidation', fill: { ...fill, time: trade!.exitTime } }
    if (reason === 'stop_loss' || reason === 'take_profit' || reason === 'trailing_stop') return { kind: 'exit', fill: { ...fill, time: trade!.exitTime, reason } }
    return { kind: 'intent', fill: { ...fill, time: intentTime } }
  })
}
