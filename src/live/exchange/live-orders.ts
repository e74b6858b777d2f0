import type { BrokerOutcome, ClosedBar, FundingEvent } from '../brokers/broker.js'
import type { ExchangeBroker, Execution } from '../brokers/exchange-broker.js'
import { RunFailure } from './run-failure.js'

/** What a live run saves beside its ledger, so a runner resumed elsewhere looks up the same order. */
export interface LiveState {
  /** Exchange time at or before which the pending order was sent: bounds its lookup among recent orders. */
  pendingSentAt?: number | undefined
  /** A target stated while an earlier order's outcome was unknown; sent once that one is settled. */
  heldTarget?: number | null | undefined
  /** Margin refusals (-2019) in a row. */
  marginRefusals?: number | undefined
}

export interface LiveOrdersDeps {
  /**
   * Commits an outcome and the run's state (StrategyRunner.commit): returns the new intent's client order
   * id (null: none), or undefined when the run is no longer this process's. `settles` names the order the
   * outcome's fill belongs to.
   */
  commit(outcome: BrokerOutcome, settles: string | null | undefined): Promise<string | null | undefined>
  /** The run's order whose outcome is not booked yet. */
  pendingOrder(): string | null
  state: LiveState | undefined
}

/** -2019 "Margin is insufficient" this many times in a row moves the strategy to error (a fourth order would fare no better). */
const MARGIN_REFUSALS_TO_FAIL = 3

/**
 * How long (exchange time) an order found nowhere stays unknown before, with the exchange's position
 * equal to ours, it is taken as never executed: a MARKET order that executed moves the position. Binance
 * may not show an accepted order "for over half an hour" (freqtrade#12681), but it does not hold a MARKET
 * order that long unexecuted; should one still execute later, reconciliation sees the position differ and
 * moves the strategy to error, never a silent duplicate. Without this a crash between commit and send
 * would stop the run for good.
 */
export const NOT_FOUND_GIVE_UP_MS = 10 * 60_000

/**
 * A live run's order path (research/live-trading.md §2–§5): the intent is committed, then sent once;
 * an unknown outcome is looked up by client order id at every later bar and reconciliation, and no new
 * order goes out while one is unknown; the exchange's position must equal the run's fills before it trades.
 */
export class LiveOrders {
  private sentAt: number | undefined
  private held: number
  private refusals: number

  constructor(
    private readonly broker: ExchangeBroker,
    private readonly deps: LiveOrdersDeps,
  ) {
    this.sentAt = deps.state?.pendingSentAt ?? undefined
    this.held = deps.state?.heldTarget ?? Number.NaN
    this.refusals = deps.state?.marginRefusals ?? 0
  }

  state(): LiveState {
    return { pendingSentAt: this.sentAt, heldTarget: this.held === this.held ? this.held : null, marginRefusals: this.refusals }
  }

  prepare(): Promise<void> {
    return this.broker.prepare()
  }

  /**
   * Settles the pending order if it can, then compares the exchange's position with the run's. Returns
   * false while an order's outcome is still unknown (the position may yet be explained by it).
   */
  async reconcile(): Promise<boolean> {
    if (this.deps.pendingOrder() !== null && !(await this.resolve())) return false
    const theirs = await this.broker.exchangeQty()
    const ours = this.broker.qty
    if (theirs !== ours) {
      throw new RunFailure(
        'POSITION_MISMATCH',
        `the exchange holds a position of ${theirs} where this run's own fills add up to ${ours}; close or explain it, then deploy again`,
      )
    }
    return true
  }

  /** One closed bar: settle what is pending, step the template, and send its new target as one order. */
  async act(bar: ClosedBar, funding: readonly FundingEvent[], intervalMs: number): Promise<void> {
    const settled = this.deps.pendingOrder() === null || (await this.resolve(bar.openTime + intervalMs))
    const outcome = this.broker.onClosedBar(bar, funding)
    const target = outcome.newTarget === outcome.newTarget ? outcome.newTarget : this.held
    if (!settled) {
      this.held = target
      outcome.newTarget = Number.NaN
      await this.deps.commit(outcome, undefined)
      return
    }
    this.held = Number.NaN
    outcome.newTarget = target
    const closeTime = bar.openTime + intervalMs
    if (target === target) this.sentAt = closeTime
    const id = await this.deps.commit(outcome, undefined)
    if (!id) return
    await this.book(id, await this.broker.send(id, target, bar.close, closeTime))
  }

  /** Looks the pending order up; `exchangeNow` (a bar's close) lets a long-missing one be settled as never executed. */
  private async resolve(exchangeNow = Number.NaN): Promise<boolean> {
    const id = this.deps.pendingOrder()
    if (id === null) return true
    const execution = await this.broker.lookUp(id, this.sentAt ?? Number.NaN)
    if (execution.kind !== 'unknown') {
      await this.book(id, execution)
      return true
    }
    const missingFor = exchangeNow - (this.sentAt ?? Number.NaN)
    if (!(missingFor > NOT_FOUND_GIVE_UP_MS) || (await this.broker.exchangeQty()) !== this.broker.qty) return false
    await this.book(id, { kind: 'refused', code: 0, msg: `not found ${Math.round(missingFor / 60_000)} minutes after it was sent, with the position unchanged` })
    return true
  }

  private async book(id: string, execution: Execution): Promise<void> {
    if (execution.kind === 'unknown') return
    if (execution.kind === 'done') {
      this.refusals = 0
      await this.deps.commit(execution.outcome, id)
      return
    }
    // A refusal: nothing happened on the exchange; the intent is booked as skipped, never sent again.
    if (execution.code === -2019) this.refusals++
    const nothing = this.broker.paper.fillAt(this.broker.qty, this.broker.lastClose, this.sentAt ?? this.broker.lastOpenTime)
    await this.deps.commit(nothing, id)
    if (this.refusals >= MARGIN_REFUSALS_TO_FAIL) {
      throw new RunFailure('MARGIN_REFUSED', `the exchange refused ${this.refusals} orders in a row for insufficient margin (-2019 ${execution.msg})`)
    }
  }
}
