import { DailyCurve } from '../../engine/daily-curve.js'
import { ExitGuard } from '../../engine/exit-guard.js'
import { GrowingSeries } from '../../engine/growing-series.js'
import { Ledger, type LedgerState } from '../../engine/ledger.js'
import { SingleSymbolStepper } from '../../engine/single-stepper.js'
import type { ExitRules, FeeRates, SymbolRules, Trade } from '../../engine/types.js'
import type { SingleSymbolSignal, SingleSymbolTemplate } from '../../templates/types.js'
import type { Broker, BrokerOutcome, ClosedBar, ExitFill, Fill, FundingEvent } from './broker.js'
import { ExitWindow, type MinuteKind, minuteKind } from './exit-window.js'
import { fillKinds, hearFills, type HeardFill } from './fill-kinds.js'
import { PlacedGuard } from '../protection/placed-guard.js'

export interface PaperSetup {
  template: SingleSymbolTemplate
  params: Record<string, unknown>
  symbol: string
  intervalMs: number
  rules: SymbolRules
  capital: number
  leverage: number
  fees: FeeRates
  /**
   * Protective exits: `rules` from the run's exits (none: only levels its signal states). Simulated here for a
   * dry run; `placed` (a live run) keeps the levels and the latch only, the exchange triggers them (PlacedGuard).
   */
  protect?: { rules: ExitRules | undefined; placed?: boolean } | undefined
}

interface PaperState {
  ledger: LedgerState
  pending: number
  lastOpenTime: number
  lastClose: number
  /** Funding events settled so far, by time: a resumed runner skips them. */
  fundingSettledThrough: number
  startedAt: number
}

/**
 * The dry-run broker: the engine's SingleSymbolStepper over a series that grows one closed bar at a
 * time, so fills (next bar's open, taker fee), funding, liquidation and protective exits (its ExitGuard,
 * walked on the minutes of each bar: ExitWindow) are the backtest's own code.
 */
export class PaperBroker implements Broker {
  readonly kind = 'paper'
  readonly ledger: Ledger
  private readonly growing: GrowingSeries
  private readonly stepper: SingleSymbolStepper
  private readonly signal: SingleSymbolSignal
  /** The minutes each bar's protective exits are examined on; undefined without exits, or when the bar examines itself. */
  private readonly window: ExitWindow | undefined
  private fills: HeardFill[] = []
  private fundingSettledThrough = -Infinity
  lastOpenTime = Number.NaN
  lastClose = Number.NaN

  constructor(
    private readonly setup: PaperSetup,
    saved?: Record<string, unknown>,
  ) {
    this.growing = new GrowingSeries(setup.symbol, setup.intervalMs)
    const { bars: series, funding } = this.growing
    this.ledger = new Ledger([setup.symbol], [setup.rules], setup.capital, setup.leverage, setup.fees.takerRate)
    hearFills(this.ledger, () => this.fills)
    this.signal = setup.template.create({ bars: [series], funding: [funding], rules: [setup.rules] }, setup.params as never)
    const state = saved as PaperState | undefined
    this.stepper = new SingleSymbolStepper(this.ledger, new DailyCurve(state?.startedAt ?? 0, setup.capital), series, funding, this.signal)
    // As simulateSingle protects a backtest: a guard when the run has exits or its signal states levels. Built
    // before restore(): the ledger restores the saved levels, best prices and latch only into levels it has.
    const protect = setup.protect
    if (protect?.placed && (protect.rules !== undefined || this.signal.levels !== undefined)) {
      this.stepper.guard = new PlacedGuard(this.ledger, protect.rules, setup.intervalMs)
    } else if (protect && (protect.rules !== undefined || this.signal.levels !== undefined)) {
      const kind = minuteKind(protect.rules, setup.intervalMs)
      this.window = kind && new ExitWindow([setup.symbol], kind)
      this.stepper.guard = new ExitGuard(this.ledger, protect.rules, setup.intervalMs, this.window?.detail)
    }
    if (state) {
      this.ledger.restore(state.ledger)
      this.stepper.pending = numberOr(state.pending, Number.NaN)
      this.lastOpenTime = numberOr(state.lastOpenTime, Number.NaN)
      this.lastClose = numberOr(state.lastClose, Number.NaN)
      this.fundingSettledThrough = numberOr(state.fundingSettledThrough, -Infinity)
    }
  }

  warm(bars: readonly ClosedBar[], funding: readonly FundingEvent[]): void {
    this.addFunding(funding)
    for (const bar of bars) {
      const i = this.append(bar)
      // The warm-up contract (Template.warmupBars): NaN here; a target would be a template bug, dropped.
      this.signal.onBar(i)
    }
    // Funding of warm-up bars is history: the run settles only events from its first bar on.
    if (bars.length > 0) {
      const end = bars[bars.length - 1]!.openTime + this.setup.intervalMs
      let k = 0
      while (k < this.growing.fundingLength && this.growing.funding.time[k]! < end) k++
      this.stepper.fundingIndex = k
    }
    if (this.lastOpenTime !== this.lastOpenTime && bars.length > 0) this.lastClose = bars[bars.length - 1]!.close
  }

  /** The run's protective exits (undefined: none), for a live run's orders on the exchange. */
  get guard(): ExitGuard | undefined {
    return this.stepper.guard
  }

  /** The minutes this run's protective exits are examined on (undefined: none, or the strategy's own bars). */
  get minuteKind(): MinuteKind | undefined {
    return this.window?.kind
  }

  /**
   * Which minutes the next bar's protective exits are examined on, when they are needed: a position is held
   * into the bar or the pending target may open one. Undefined otherwise (nothing to walk).
   */
  get minutesWanted(): MinuteKind | undefined {
    if (!this.window || (this.ledger.qty[0] === 0 && this.stepper.pending !== this.stepper.pending)) return undefined
    return this.window.kind
  }

  /** Acts on one closed bar; `minutes`: its 1m bars of the kind minutesWanted named (none: the bar is examined on itself). */
  onClosedBar(bar: ClosedBar, funding: readonly FundingEvent[], minutes?: readonly ClosedBar[]): BrokerOutcome {
    this.addFunding(funding)
    this.window?.set(0, minutes)
    const i = this.append(bar)
    const before = this.begin()
    const hadIntent = this.stepper.pending === this.stepper.pending
    this.stepper.run(i, i + 1)
    this.lastOpenTime = bar.openTime
    this.lastClose = bar.close
    const fundingAfter = this.ledger.fundingPaid
    const outcome = this.finish(before, bar.openTime, this.setup.intervalMs, hadIntent)
    outcome.newTarget = this.stepper.pending
    outcome.fundingPaid = fundingAfter - before.funding
    this.fundingSettledThrough = this.stepper.fundingIndex > 0 ? this.growing.funding.time[this.stepper.fundingIndex - 1]! : this.fundingSettledThrough
    return outcome
  }

  closeAll(price: number, time: number): BrokerOutcome {
    this.stepper.pending = Number.NaN
    return this.fillAt(0, price, time)
  }

  /**
   * Moves the ledger to the signed quantity `qty` by one fill at `price` (the engine's moveTo: fee at the
   * taker rate, round trips closed): how an exchange run books the fill the exchange reported. `intent`
   * false: the fill is no order of the run's (an exchange-side close), so it settles no intent.
   */
  fillAt(qty: number, price: number, time: number, intent = true): BrokerOutcome {
    const before = this.begin()
    this.ledger.moveTo(0, qty, price, time)
    return this.finish(before, time, 0, intent)
  }

  /**
   * The exchange closed `size` of the position itself (liquidation, ADL) at `price` for `fee`: booked as
   * reported, with no intent of ours filled; the stepper carries on flat, as a backtest after a liquidation.
   */
  exchangeClose(size: number, price: number, time: number, reason: Trade['exitReason'], fee: number, clientOrderId?: string): BrokerOutcome {
    const before = this.begin()
    this.ledger.exchangeClose(0, size, price, time, reason, fee)
    latchAfter(this.ledger, 0, reason)
    const outcome = this.finish(before, time, 0, false)
    for (const exit of outcome.protectiveExits) exit.clientOrderId = clientOrderId
    return outcome
  }

  /**
   * Takes the target the template stated at the last close out of the stepper, so the stepper never
   * fills it at the next open: an exchange run sends it as an order instead. NaN when none.
   */
  takeIntent(): number {
    const target = this.stepper.pending
    this.stepper.pending = Number.NaN
    return target
  }

  snapshot(): Record<string, unknown> {
    const state: PaperState = {
      ledger: this.ledger.snapshot(),
      pending: this.stepper.pending,
      lastOpenTime: this.lastOpenTime,
      lastClose: this.lastClose,
      fundingSettledThrough: this.fundingSettledThrough,
      startedAt: this.stepper.curve.times[0]!,
    }
    // Fresh plain values (the ledger's arrays are copies). Saved as JSON, where NaN and ±Infinity become
    // null, read back by numberOr; a JSON round trip here cost as much again as the save (bench/live.ts).
    return state as unknown as Record<string, unknown>
  }

  /**
   * The signed quantity the engine would hold after moving to `target` at `price` (Ledger.applyTarget on a
   * copy): what a live run sends, and a pending intent's size at the close that stated it.
   */
  desiredQty(target: number, price: number, time: number): number {
    const { setup } = this
    const scratch = new Ledger([setup.symbol], [setup.rules], setup.capital, setup.leverage, setup.fees.takerRate)
    scratch.restore(this.ledger.snapshot())
    scratch.applyTarget(0, target, price, time)
    return scratch.qty[0]!
  }

  totals(mark: number): { realized: number; unrealized: number; qty: number } {
    const ledger = this.ledger
    return { realized: ledger.cash - this.setup.capital, unrealized: ledger.unrealized(0, mark), qty: ledger.qty[0]! }
  }

  private begin() {
    this.fills = []
    return { qty: this.ledger.qty[0]!, trades: this.ledger.trades.length, funding: this.ledger.fundingPaid }
  }

  private finish(before: { qty: number; trades: number }, openTime: number, intervalMs: number, hadIntent: boolean): BrokerOutcome {
    const trades: Trade[] = this.ledger.trades.slice(before.trades)
    const liquidations: Fill[] = []
    const intentFills: Fill[] = []
    const protectiveExits: ExitFill[] = []
    for (const heard of fillKinds(this.fills, this.ledger.trades, openTime)) {
      if (heard.kind === 'liquidation') liquidations.push(heard.fill)
      else if (heard.kind === 'exit') protectiveExits.push(heard.fill)
      else intentFills.push(heard.fill)
    }
    void intervalMs
    return {
      filledIntent: hadIntent ? { fills: intentFills } : undefined,
      liquidations,
      protectiveExits,
      trades,
      qtyBefore: before.qty,
      qtyAfter: this.ledger.qty[0]!,
      entryPrice: this.ledger.entryPrice[0]!,
      newTarget: Number.NaN,
      fundingPaid: 0,
    }
  }

  private append(bar: ClosedBar): number {
    return this.growing.append(bar)
  }

  private addFunding(events: readonly FundingEvent[]): void {
    this.growing.addFunding(events, this.fundingSettledThrough)
  }
}

/**
 * A protective order the exchange triggered closed symbol s's position: the latch holds it flat until the
 * strategy states another target, as after the engine's own exit.
 */
export function latchAfter(ledger: Ledger, s: number, reason: Trade['exitReason']): void {
  if (ledger.qty[s] === 0 && ledger.exits && (reason === 'stop_loss' || reason === 'take_profit' || reason === 'trailing_stop')) ledger.exits.latch(s)
}

/** JSON turned NaN and ±Infinity into null. */
function numberOr(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback
}

