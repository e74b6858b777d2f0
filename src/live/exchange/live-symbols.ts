import type { SymbolRules } from '../../engine/types.js'
import type { BinanceTradingClient } from '../../trading/binance/trading-client.js'
import type { FundingEvent } from '../brokers/broker.js'
import type { MultiPaperBroker, StepOutcome } from '../brokers/multi-paper-broker.js'
import { SymbolExchange, type SymbolLedger } from '../brokers/symbol-exchange.js'
import type { PendingOrders } from '../record-step.js'
import type { Step } from '../runner/step-assembly.js'
import { type LiveProtection, LiveOrders, type LiveOrdersDeps, type LiveState } from './live-orders.js'
import type { UserStreamEvent } from './user-data-streams.js'

export interface LiveSymbolsDeps extends Pick<LiveOrdersDeps<StepOutcome>, 'prefix' | 'bookedStatus' | 'since'> {
  /**
   * The runner's commit of a step or a booking: `settles` names, per symbol, the order a booking's fill
   * belongs to. Returns the new intents by symbol, or undefined when the run is no longer this process's.
   */
  commit(outcome: StepOutcome, settles?: PendingOrders): Promise<PendingOrders | undefined>
  /** The run's orders whose outcome is not booked yet, by symbol. */
  pendingOrders(): PendingOrders
  /** Each symbol's saved order path, by symbol. */
  state: Record<string, LiveState> | undefined
  /** Symbol s's protective orders on the exchange (its ledger's levels); undefined: none placed. */
  protection?: ((s: number, ledger: SymbolLedger<StepOutcome>) => LiveProtection & { useClient(client: BinanceTradingClient): void }) | undefined
}

/**
 * A live many-symbol run's exchange side: per symbol (in the run's order) its orders on the exchange
 * (SymbolExchange over its part of the run's one ledger) and its own order path (LiveOrders: one pending
 * order, held target, reconciliation), and the step that turns the template's targets into one order per symbol.
 */
export class LiveSymbols {
  private readonly exchanges: SymbolExchange<StepOutcome>[]
  private readonly orders: LiveOrders<StepOutcome>[]
  private readonly protections: ((LiveProtection & { useClient(client: BinanceTradingClient): void }) | undefined)[]

  constructor(
    private readonly broker: MultiPaperBroker,
    client: BinanceTradingClient,
    private readonly symbols: readonly string[],
    rules: readonly SymbolRules[],
    leverage: number,
    private readonly deps: LiveSymbolsDeps,
  ) {
    this.exchanges = symbols.map((symbol, s) => new SymbolExchange(broker.symbolLedger(s), client, symbol, rules[s]!, leverage))
    this.protections = symbols.map((_, s) => deps.protection?.(s, this.exchanges[s]!.ledger))
    this.orders = symbols.map(
      (symbol, s) =>
        new LiveOrders(this.exchanges[s]!, {
          protection: this.protections[s],
          commit: (outcome, settles) => deps.commit(outcome, settles === undefined || settles === null ? undefined : { [symbol]: settles }),
          pendingOrder: () => deps.pendingOrders()[symbol] ?? null,
          state: deps.state?.[symbol],
          prefix: deps.prefix,
          bookedStatus: deps.bookedStatus,
          since: deps.since,
        }),
    )
  }

  /** Each symbol's order path as saved with the run's state. */
  state(): Record<string, LiveState> {
    return Object.fromEntries(this.symbols.map((symbol, s) => [symbol, this.orders[s]!.state()]))
  }

  /** Trades with freshly opened credentials from now on (after a reconnect: a deleted or replaced key shows up). */
  useClient(client: BinanceTradingClient): void {
    for (const exchange of this.exchanges) exchange.useClient(client)
    for (const protection of this.protections) protection?.useClient(client)
  }

  /** Every symbol's leverage and isolated margin (one-way mode checked), before the first order. */
  async prepare(): Promise<void> {
    for (const exchange of this.exchanges) await exchange.prepare()
  }

  /** Symbol `s` against the exchange (after its kline stream reconnected). */
  async reconcile(s: number): Promise<void> {
    await this.orders[s]!.reconcile()
  }

  /** Every symbol's reconciliation, one after another (at start, on a takeover, after the user stream reconnects). */
  async reconcileAll(stopped: () => boolean): Promise<void> {
    for (const orders of this.orders) {
      if (stopped()) return
      await orders.reconcile()
    }
  }

  /**
   * What a user-stream event does, as a step for the runner's chain: a (re)connect reconciles every symbol;
   * an order update or a position goes to its symbol's order path; another symbol's is not this run's (undefined).
   */
  stepFor(event: UserStreamEvent, stopped: () => boolean): (() => Promise<void>) | undefined {
    if (event.type === 'connected') return () => this.reconcileAll(stopped)
    const s = this.symbols.indexOf(event.type === 'position' ? event.symbol : event.update.symbol)
    if (s < 0) return undefined
    const orders = this.orders[s]!
    if (event.type === 'order') return () => orders.onOrderUpdate(event.update)
    if (event.type === 'algo') return () => orders.onAlgoUpdate(event.update)
    return () => orders.onPosition(event.amount)
  }

  /**
   * A live step: each symbol settles what is pending and must agree with the exchange; the template steps;
   * its targets leave the stepper and are sized on one equity (the account's at this step's closes, as the
   * stepper sizes a step's fills); the intents are committed, then each ready symbol's order is sent (side by
   * side: each is its symbol's only order, a reversal's after its old protection is cancelled) and the answers are booked one after another. A symbol not ready
   * holds its target and sends it at its first ready step.
   */
  async act(step: Step, funding: readonly (readonly FundingEvent[])[], closeTime: number): Promise<void> {
    const ready: boolean[] = []
    for (const orders of this.orders) ready.push(await orders.ready(closeTime))
    const outcome = this.broker.onStep(step, funding)
    const targets = this.broker.takeIntents().map((stated, s) => this.orders[s]!.aim(stated, ready[s]!, closeTime))
    outcome.symbols.forEach((o, s) => (o.newTarget = targets[s]!))
    const desired = this.broker.desiredQtys(targets, closeTime)
    const created = await this.deps.commit(outcome)
    if (!created) return
    // A reversal goes out once the old side's protective orders are cancelled and a trigger before the cancel is
    // booked (LiveOrders.beforeOrder), one symbol after another as every booking is: sendQty then sizes the order
    // from what is held, never at twice the target.
    for (let s = 0; s < this.symbols.length; s++) if (created[this.symbols[s]!] !== undefined) await this.orders[s]!.beforeOrder(desired[s]!)
    const sends = this.symbols.map((symbol, s) => {
      const id = created[symbol]
      if (id === undefined) return undefined
      // The target in force for the latch (the engine marks it at the fill; a live order is that fill).
      this.broker.guard?.filled(s, targets[s]!)
      return this.exchanges[s]!.sendQty(id, desired[s]!, this.broker.lastClose[s]!, closeTime).then((execution) => ({ s, id, execution }))
    })
    for (const sent of await Promise.all(sends)) if (sent) await this.orders[sent.s]!.book(sent.id, sent.execution)
    // Levels a module moved at this step are moved on the exchange (a booked fill has already synced its symbol).
    for (let s = 0; s < this.symbols.length; s++) if (created[this.symbols[s]!] === undefined) await this.orders[s]!.protect()
  }
}
