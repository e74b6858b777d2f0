import { DailyCurve } from '../../engine/daily-curve.js'
import { ExitGuard } from '../../engine/exit-guard.js'
import { GrowingSeries } from '../../engine/growing-series.js'
import { Ledger, type LedgerState } from '../../engine/ledger.js'
import { MultiSymbolStepper } from '../../engine/multi-stepper.js'
import type { ExitRules, FeeRates, SymbolRules, Trade } from '../../engine/types.js'
import type { MultiSymbolSignal, MultiSymbolTemplate } from '../../templates/types.js'
import type { Step } from '../runner/step-assembly.js'
import type { BrokerOutcome, ClosedBar, ExitFill, Fill, FundingEvent } from './broker.js'
import { ExitWindow, type MinuteKind, minuteKind } from './exit-window.js'
import { fillKinds, hearFills, type HeardFill } from './fill-kinds.js'
import { latchAfter } from './paper-broker.js'
import { PlacedGuard } from '../protection/placed-guard.js'
import type { SymbolLedger } from './symbol-exchange.js'

export interface MultiPaperSetup {
  template: MultiSymbolTemplate
  params: Record<string, unknown>
  /** In the strategy's order: the ledger's symbol index. */
  symbols: readonly string[]
  intervalMs: number
  rules: readonly SymbolRules[]
  capital: number
  leverage: number
  fees: FeeRates
  /** Protective exits, as PaperSetup.protect: simulated for a dry run, `placed` on the exchange for a live one. */
  protect?: { rules: ExitRules | undefined; placed?: boolean } | undefined
}

/** One symbol's part of a step: its order's fill, its liquidations and round trips, its position, its new target. */
export interface SymbolOutcome extends BrokerOutcome {
  symbol: string
  /** Its previous target was still waiting for the symbol's next bar when this step stated a new one: that intent is cancelled. */
  replaced: boolean
}

/** What one step (or a close of every position) did, symbol by symbol, in the run's symbol order. */
export interface StepOutcome {
  symbols: SymbolOutcome[]
  /** Funding settled at this step over every symbol. */
  fundingPaid: number
}

interface MultiPaperState {
  ledger: LedgerState
  pending: (number | null)[]
  lastOpenTime: number | null
  lastClose: (number | null)[]
  /** Per symbol, the time of the last funding event settled: a resumed runner skips those. */
  fundingSettledThrough: (number | null)[]
  startedAt: number
}

/**
 * A many-symbol dry run's broker: the engine's MultiSymbolStepper over series that grow one closed step at
 * a time, so fills (each symbol's next bar's open, taker fee, sized on the whole account's equity), funding,
 * liquidation and protective exits (walked on each symbol's minutes of the step: ExitWindow) are
 * simulateMulti's own code (DESIGN §6).
 */
export class MultiPaperBroker {
  readonly kind = 'paper'
  readonly ledger: Ledger
  private readonly growing: GrowingSeries[]
  private readonly stepper: MultiSymbolStepper
  private readonly signal: MultiSymbolSignal
  private readonly at: Int32Array
  /** Symbols whose target the signal stated at the last step (the stepper keeps only the targets). */
  private readonly stated: Uint8Array
  private fills: HeardFill[] = []
  /** The minutes each step's protective exits are examined on, per symbol; undefined without exits, or when bars examine themselves. */
  private readonly window: ExitWindow | undefined
  private readonly fundingSettledThrough: Float64Array
  lastOpenTime = Number.NaN

  constructor(
    private readonly setup: MultiPaperSetup,
    saved?: Record<string, unknown>,
  ) {
    const count = setup.symbols.length
    this.growing = setup.symbols.map((symbol) => new GrowingSeries(symbol, setup.intervalMs))
    const bars = this.growing.map((g) => g.bars)
    const funding = this.growing.map((g) => g.funding)
    this.ledger = new Ledger(setup.symbols, setup.rules, setup.capital, setup.leverage, setup.fees.takerRate)
    hearFills(this.ledger, () => this.fills)
    const inner = setup.template.create({ bars, funding, rules: setup.rules }, setup.params as never)
    this.stated = new Uint8Array(count)
    this.signal = {
      onStep: (at, targets) => {
        const any = inner.onStep(at, targets)
        for (let s = 0; s < count; s++) this.stated[s] = any && targets[s] === targets[s] ? 1 : 0
        return any
      },
      // The same array: the stepper NaN-fills it before each onStep and reads what the signal wrote.
      ...(inner.levels !== undefined ? { levels: inner.levels } : {}),
    }
    const state = saved as MultiPaperState | undefined
    this.stepper = new MultiSymbolStepper(this.ledger, new DailyCurve(state?.startedAt ?? 0, setup.capital), bars, funding, this.signal)
    // Before restore(), as PaperBroker: the ledger restores saved levels, best prices and latches only into levels it has.
    const protect = setup.protect
    if (protect?.placed && (protect.rules !== undefined || inner.levels !== undefined)) {
      this.stepper.guard = new PlacedGuard(this.ledger, protect.rules, setup.intervalMs)
    } else if (protect && (protect.rules !== undefined || inner.levels !== undefined)) {
      const kind = minuteKind(protect.rules, setup.intervalMs)
      this.window = kind && new ExitWindow(setup.symbols, kind)
      this.stepper.guard = new ExitGuard(this.ledger, protect.rules, setup.intervalMs, this.window?.detail)
    }
    this.at = new Int32Array(count)
    this.fundingSettledThrough = new Float64Array(count).fill(-Infinity)
    if (state) {
      this.ledger.restore(state.ledger)
      for (let s = 0; s < count; s++) {
        this.stepper.pending[s] = state.pending[s] ?? Number.NaN
        this.stepper.lastClose[s] = state.lastClose[s] ?? Number.NaN
        this.fundingSettledThrough[s] = state.fundingSettledThrough[s] ?? -Infinity
      }
      this.lastOpenTime = state.lastOpenTime ?? Number.NaN
    }
  }

  get symbols(): readonly string[] {
    return this.setup.symbols
  }

  /** The last close per symbol: open positions are marked there. */
  get lastClose(): Float64Array {
    return this.stepper.lastClose
  }

  /** Feeds warm-up steps to the template only (no fills: its targets there are dropped by the warm-up contract). */
  warm(steps: readonly Step[], funding: readonly (readonly FundingEvent[])[]): void {
    this.addFunding(funding)
    for (const step of steps) this.stepper.warmStep(this.append(step))
    // Funding of warm-up steps is history: a fresh run settles only events from its first step on. A resumed
    // run's series hold only events after the last it settled: a symbol without a bar since still owes them.
    if (steps.length > 0 && this.lastOpenTime !== this.lastOpenTime) {
      const end = steps[steps.length - 1]!.openTime + this.setup.intervalMs
      this.growing.forEach((g, s) => {
        let k = 0
        while (k < g.fundingLength && g.funding.time[k]! < end) k++
        this.stepper.fundingIndex[s] = k
      })
    }
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
   * Which minutes symbol s's protective exits are examined on at the next step, when needed: it holds a
   * position into the step or its pending target may open one. Undefined otherwise.
   */
  minutesWanted(s: number): MinuteKind | undefined {
    if (!this.window || (this.ledger.qty[s] === 0 && this.stepper.pending[s] !== this.stepper.pending[s])) return undefined
    return this.window.kind
  }

  /** Acts on one step; `minutes[s]`: symbol s's 1m bars of it, of the kind minutesWanted(s) named (none: its bar is examined on itself). */
  onStep(step: Step, funding: readonly (readonly FundingEvent[])[], minutes: readonly (readonly ClosedBar[] | undefined)[] = []): StepOutcome {
    this.addFunding(funding)
    if (this.window) for (let s = 0; s < this.setup.symbols.length; s++) this.window.set(s, minutes[s])
    const at = this.append(step)
    const before = this.begin()
    const pendingBefore = Float64Array.from(this.stepper.pending)
    this.stepper.step(step.openTime, at)
    this.lastOpenTime = step.openTime
    const outcome = this.finish(before, step.openTime, (s) => pendingBefore[s] === pendingBefore[s] && at[s]! >= 0)
    outcome.symbols.forEach((o, s) => {
      o.newTarget = this.stated[s] ? this.stepper.pending[s]! : Number.NaN
      o.replaced = this.stated[s] === 1 && pendingBefore[s] === pendingBefore[s] && at[s]! < 0
    })
    this.growing.forEach((g, s) => {
      const k = this.stepper.fundingIndex[s]!
      if (k > 0) this.fundingSettledThrough[s] = g.funding.time[k - 1]!
    })
    return outcome
  }

  /** Reduce-only market closes of every open position at its symbol's last close (pause with close_positions). */
  closeAll(time: number): StepOutcome {
    const before = this.begin()
    const held = Array.from(this.ledger.qty, (q) => q !== 0)
    this.stepper.pending.fill(Number.NaN)
    for (let s = 0; s < this.setup.symbols.length; s++) if (held[s]) this.ledger.moveTo(s, 0, this.stepper.lastClose[s]!, time)
    return this.finish(before, time, (s) => held[s]!)
  }

  /**
   * Takes the targets the template stated at this step's close out of the stepper, so the stepper never
   * fills them at the next open: a live run sends them as orders instead. NaN for a symbol with none.
   */
  takeIntents(): Float64Array {
    const targets = Float64Array.from(this.stepper.pending)
    this.stepper.pending.fill(Number.NaN)
    return targets
  }

  /**
   * The signed quantities the engine would hold after moving to `targets` (NaN: the symbol stays as it is) at
   * the last closes: each sized on one equity, the account's there, as the stepper sizes a step's fills, and
   * moved on a copy of the ledger, so a leg the engine would skip (below the symbol's minimum quantity or
   * notional) is not sent either.
   */
  desiredQtys(targets: Float64Array, time: number): Float64Array {
    const { stepper, setup } = this
    const equity = stepper.equityAt(stepper.lastClose)
    const scratch = new Ledger(setup.symbols, setup.rules, setup.capital, setup.leverage, setup.fees.takerRate)
    scratch.restore(this.ledger.snapshot())
    targets.forEach((target, s) => {
      const price = stepper.lastClose[s]!
      if (target === target) scratch.moveTo(s, scratch.targetQty(s, target, equity, price), price, time)
    })
    return Float64Array.from(scratch.qty)
  }

  /**
   * Moves symbol `s` to the signed `qty` by one fill at `price` (the engine's moveTo: fee at the taker rate,
   * round trips closed): how a live run books the fill the exchange reported. `intent` false: the fill is no
   * order of the run's (an exchange-side close).
   */
  fillAt(s: number, qty: number, price: number, time: number, intent = true): StepOutcome {
    const before = this.begin()
    this.ledger.moveTo(s, qty, price, time)
    return this.finish(before, time, (k) => intent && k === s)
  }

  /** The exchange closed `size` of symbol `s`'s position itself (liquidation, ADL) at `price` for `fee`. */
  exchangeClose(s: number, size: number, price: number, time: number, reason: Trade['exitReason'], fee: number, clientOrderId?: string): StepOutcome {
    const before = this.begin()
    this.ledger.exchangeClose(s, size, price, time, reason, fee)
    latchAfter(this.ledger, s, reason)
    const outcome = this.finish(before, time, () => false)
    for (const exit of outcome.symbols[s]!.protectiveExits) exit.clientOrderId = clientOrderId
    return outcome
  }

  /** Symbol `s` of the ledger as a live run's exchange path books into it. */
  symbolLedger(s: number): SymbolLedger<StepOutcome> {
    const broker = this
    return {
      get qty() {
        return broker.ledger.qty[s]!
      },
      get lastClose() {
        return broker.lastClose[s]!
      },
      get lastOpenTime() {
        return broker.lastOpenTime
      },
      fillAt: (qty, price, time, intent) => this.fillAt(s, qty, price, time, intent),
      exchangeClose: (size, price, time, reason, fee, clientOrderId) => this.exchangeClose(s, size, price, time, reason, fee, clientOrderId),
    }
  }

  snapshot(): Record<string, unknown> {
    const nullable = (x: number) => (Number.isFinite(x) ? x : null)
    const state: MultiPaperState = {
      ledger: this.ledger.snapshot(),
      pending: Array.from(this.stepper.pending, nullable),
      lastOpenTime: nullable(this.lastOpenTime),
      lastClose: Array.from(this.stepper.lastClose, nullable),
      fundingSettledThrough: Array.from(this.fundingSettledThrough, nullable),
      startedAt: this.stepper.curve.times[0]!,
    }
    return state as unknown as Record<string, unknown>
  }

  /** Realized net PnL, every position's unrealized PnL at its last close, and how many positions are open. */
  totals(): { realized: number; unrealized: number; open: number } {
    const { ledger } = this
    let unrealized = 0
    let open = 0
    for (let s = 0; s < this.setup.symbols.length; s++) {
      if (ledger.qty[s] === 0) continue
      unrealized += ledger.unrealized(s, this.stepper.lastClose[s]!)
      open++
    }
    return { realized: ledger.cash - this.setup.capital, unrealized, open }
  }

  private append(step: Step): Int32Array {
    const at = this.at
    step.bars.forEach((bar, s) => (at[s] = bar ? this.growing[s]!.append(bar) : -1))
    return at
  }

  private addFunding(funding: readonly (readonly FundingEvent[])[]): void {
    this.growing.forEach((g, s) => g.addFunding(funding[s] ?? [], this.fundingSettledThrough[s]!))
  }

  private begin() {
    this.fills = []
    return { qty: Float64Array.from(this.ledger.qty), trades: this.ledger.trades.length, funding: this.ledger.fundingPaid }
  }

  /** Each symbol's fills split into its order's, its liquidations' and its protective exits' (fillKinds). */
  private finish(before: { qty: Float64Array; trades: number; funding: number }, time: number, filledIntent: (s: number) => boolean): StepOutcome {
    const trades = this.ledger.trades.slice(before.trades)
    const kinds = fillKinds(this.fills, this.ledger.trades, time)
    const symbols = this.setup.symbols.map((symbol, s): SymbolOutcome => {
      const mine = trades.filter((t) => t.symbol === symbol)
      const liquidations: Fill[] = []
      const intentFills: Fill[] = []
      const protectiveExits: ExitFill[] = []
      kinds.forEach((heard, k) => {
        if (this.fills[k]!.s !== s) return
        if (heard.kind === 'liquidation') liquidations.push(heard.fill)
        else if (heard.kind === 'exit') protectiveExits.push(heard.fill)
        else intentFills.push(heard.fill)
      })
      return {
        symbol,
        filledIntent: filledIntent(s) ? { fills: intentFills } : undefined,
        liquidations,
        protectiveExits,
        trades: mine,
        qtyBefore: before.qty[s]!,
        qtyAfter: this.ledger.qty[s]!,
        entryPrice: this.ledger.entryPrice[s]!,
        newTarget: Number.NaN,
        fundingPaid: 0,
        replaced: false,
      }
    })
    return { symbols, fundingPaid: this.ledger.fundingPaid - before.funding }
  }
}
