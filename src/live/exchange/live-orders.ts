import type { BinanceTrade } from '../../trading/binance/trading-client.js'
import { type ExchangeCloseFill, exchangeCloseReason, type Execution, type SymbolExchange } from '../brokers/symbol-exchange.js'
import { RunFailure } from './run-failure.js'
import type { AlgoUpdate, OrderUpdate } from './user-data-streams.js'
import { metrics } from '../../ops/registry.js'

/** What a protective order an ALGO_UPDATE named was: its kind and closing side. */
export interface UpdatedOrder {
  kind: 'stop_loss' | 'take_profit' | 'trailing_stop'
  side: string
  wasActive: boolean
}

/** How a protection sync ended: all rests as asked, something still unknown, the position closed at market (an alarm), or the run is not this process's. */
export type ProtectionAfter = 'settled' | 'unsettled' | 'closed' | 'fenced'

/**
 * A symbol's protective orders on the exchange (src/live/protection/SymbolProtection), as the order path
 * drives them: after every booked fill, every bar and every reconciliation.
 */
export interface LiveProtection {
  /** The protective kind a client order id names (a triggered child's id is its clientAlgoId); undefined when none of ours. */
  kindOf(clientOrderId: string): UpdatedOrder['kind'] | undefined
  /** Whether an algo order's client id is this strategy's. */
  owns(clientAlgoId: string): boolean
  /** Makes the exchange hold the orders the ledger's levels ask for. */
  protect(exchangeQty: () => Promise<number>): Promise<ProtectionAfter>
  /** The reconciliation's part: the exchange's open algo orders against ours (a foreign one throws FOREIGN_ORDER). */
  check(): Promise<boolean>
  /** An ALGO_UPDATE of ours: its row's new status; the order as it was, or undefined when none of ours. */
  onUpdate(update: AlgoUpdate): Promise<UpdatedOrder | undefined>
  closeAtMarket(kind: UpdatedOrder['kind'], exchangeQty: number): Promise<void>
  /** Cancels every protective order of the run's symbol; false while a cancel's outcome is unknown. */
  cancelAll(): Promise<boolean>
  /** last_error, strategy.error and a stream message; the run goes on. */
  alarm(message: string): Promise<void>
}

/** What a live run saves beside its ledger, so a runner resumed elsewhere looks up the same order. */
export interface LiveState {
  /** Exchange time at or before which the pending order was sent: bounds its lookup among recent orders. */
  pendingSentAt?: number | undefined
  /** A target stated while an earlier order's outcome was unknown; sent once that one is settled. */
  heldTarget?: number | null | undefined
  /** Margin refusals (-2019) in a row. */
  marginRefusals?: number | undefined
  /** The exchange's trade id from which the next fills check reads userTrades (every earlier fill is accounted for). */
  tradesFromId?: number | undefined
  /** The exchange-side close fills already booked (`<orderId>:<tradeId>`, the latest EXCHANGE_FILLS_KEPT): each is booked once. */
  exchangeFills?: string[] | undefined
}

export interface LiveOrdersDeps<O> {
  /**
   * Commits a booking and the run's state (the runner's commit): undefined when the run is no longer this
   * process's. `settles` names the order the booking's fill belongs to (undefined: the pending one).
   */
  commit(outcome: O, settles: string | null | undefined): Promise<unknown>
  /** The symbol's order whose outcome is not booked yet. */
  pendingOrder(): string | null
  state: LiveState | undefined
  /** This strategy's client order ids start so (`pp-<strategy hex>-`, every run). */
  prefix: string
  /** How our ledger holds an order (strategy_orders.status), undefined when it is none of ours. */
  bookedStatus(clientOrderId: string): Promise<string | undefined>
  /** Exchange time before any of this run's orders (its first active bar): where the first fills check starts. */
  since(): number
  /** The symbol's protective orders on the exchange; undefined for a run that places none. */
  protection?: LiveProtection | undefined
}

/** userTrades' largest page. */
const TRADES_PAGE = 1000

/** Exchange-side close fills remembered as booked: far more than one liquidation's fills, however many the exchange splits it in. */
const EXCHANGE_FILLS_KEPT = 64

/** -2019 "Margin is insufficient" this many times in a row moves the strategy to error (a fourth order would fare no better). */
const MARGIN_REFUSALS_TO_FAIL = 3

/** Looks at the exchange's fills and position a reconciliation takes before a difference is a mismatch. */
const RECONCILE_LOOKS = 3

/**
 * How long (exchange time) an order found nowhere stays unknown before, with the exchange's position
 * equal to ours, it is taken as never executed: a MARKET order that executed moves the position. Binance
 * may not show an accepted order "for over half an hour" (freqtrade#12681), but it does not hold a MARKET
 * order that long unexecuted; should one still execute later, reconciliation (on the position change
 * ACCOUNT_UPDATE reports, or the next reconnect) books it from its trades. Without this a crash between
 * commit and send would stop the run for good.
 */
export const NOT_FOUND_GIVE_UP_MS = 10 * 60_000

/**
 * A live run's order path on one symbol (research/live-trading.md §2–§5): the intent is committed, then
 * sent once; an unknown outcome is looked up by client order id at every later bar and reconciliation, and
 * no new order goes out while one is unknown; the exchange's position must equal the run's fills before it
 * trades. A one-symbol run has one; a many-symbol run one per symbol, each with its own pending order and
 * saved LiveState (`O`: what a booking returns for the run to commit).
 */
export class LiveOrders<O> {
  private sentAt: number | undefined
  private held: number
  private refusals: number
  private tradesFromId: number | undefined
  private exchangeFills: string[]
  /** The last reconciliation found the exchange and the ledger in agreement; new orders go out only then. */
  private agreed = false

  constructor(
    private readonly broker: SymbolExchange<O>,
    private readonly deps: LiveOrdersDeps<O>,
  ) {
    this.sentAt = deps.state?.pendingSentAt ?? undefined
    this.held = deps.state?.heldTarget ?? Number.NaN
    this.refusals = deps.state?.marginRefusals ?? 0
    this.tradesFromId = deps.state?.tradesFromId ?? undefined
    this.exchangeFills = deps.state?.exchangeFills ?? []
  }

  state(): LiveState {
    return { pendingSentAt: this.sentAt, heldTarget: this.held === this.held ? this.held : null, marginRefusals: this.refusals, tradesFromId: this.tradesFromId, exchangeFills: this.exchangeFills }
  }

  prepare(): Promise<void> {
    return this.broker.prepare()
  }

  /**
   * The exchange's picture against the run's (at start, after every reconnect of the kline or user
   * stream, and before trading while they disagreed): settles the pending order, cancels a stray open
   * order of ours and refuses someone else's, books fills of ours the ledger missed (from the trades,
   * never by sending again), then requires the exchange's position to equal the ledger's. Returns false
   * while something is still unknown (an order's outcome, a cancel); no new order goes out until true.
   */
  async reconcile(): Promise<boolean> {
    this.agreed = false
    if (this.deps.pendingOrder() !== null && !(await this.resolve())) return false
    if (!(await this.settleOpenOrders())) return false
    const protection = this.deps.protection
    // The algo orders before the fills: a protective order found triggered is then booked from its child's trades.
    const checked = protection ? await protection.check() : true
    for (let look = 1; ; look++) {
      await this.bookMissedFills()
      const theirs = await this.broker.exchangeQty()
      const ours = this.broker.qty
      if (theirs === ours) break
      // The fills are read before the position: a fill landing between the two reads (an exchange-side
      // close at that moment) shows as a difference that the next look books. Only a difference that
      // stays is a mismatch.
      if (look < RECONCILE_LOOKS) continue
      metrics.reconciliationMismatches.inc({ mode: 'live' })
      throw new RunFailure(
        'POSITION_MISMATCH',
        `the exchange holds a position of ${theirs} where this run's own fills add up to ${ours}; close or explain it, then deploy again`,
      )
    }
    this.agreed = true
    // A protective order that is missing (cancelled behind the run's back, expired, given up) is placed again;
    // one of ours the position does not need is cancelled. What is unknown there does not hold trading back.
    if (checked) await this.protect()
    return true
  }

  /**
   * Makes the exchange hold the protective orders the ledger's levels ask for (after every booked fill, every
   * bar and every reconciliation that agreed); nothing while an order's outcome is unknown (the position is).
   * A level refused as already crossed closes the position at market; its fill is booked at once from the trades.
   */
  async protect(): Promise<void> {
    const protection = this.deps.protection
    if (!protection || this.deps.pendingOrder() !== null) return
    const after = await protection.protect(() => this.broker.exchangeQty())
    if (after === 'closed') await this.bookMissedFills()
  }

  /**
   * Before a reversal's order (held long, `desired` short, or the other way): the old side's protective orders are
   * cancelled first, and a trigger that came before the cancel is booked from the trades. One firing while the
   * order flew would close the old side first, and the order, sized from the old side, would then open the new
   * side at twice the target (and book its fill after the close, or before it with no order row for the close):
   * the run's order is now sized from what is held once no protective order of the old side can fire. The new
   * side's orders are placed once the order is booked, as after any fill. A reduction needs none of this (its
   * order is reduce-only: a stop that fired first leaves it nothing to overshoot with).
   */
  async beforeOrder(desired: number): Promise<void> {
    const held = this.broker.qty
    if (!this.deps.protection || held === 0 || desired === 0 || Math.sign(desired) === Math.sign(held)) return
    await this.deps.protection.cancelAll()
    await this.bookMissedFills()
  }

  /**
   * ALGO_UPDATE: a protective order of ours changed status (its row follows). Ended (finished, cancelled,
   * expired, rejected): the run reconciles, booking a triggered order's fill from the trades if the stream
   * did not bring it, and placing a missing order again. REJECTED at trigger (a failed margin check: the
   * level was crossed and nothing closed) on an open position is an alarm and a close at market; EXPIRED of
   * an order that still guards the open position is an alarm, and the order is placed again. An algo order
   * that is not ours on the symbol: reconciled now (FOREIGN_ORDER).
   */
  async onAlgoUpdate(update: AlgoUpdate): Promise<void> {
    const protection = this.deps.protection
    if (!protection) return
    if (!protection.owns(update.clientAlgoId)) {
      if (update.status === 'NEW') await this.reconcile()
      return
    }
    const order = await protection.onUpdate(update)
    if (!order || !['FINISHED', 'CANCELED', 'EXPIRED', 'REJECTED'].includes(update.status)) return
    if (update.status === 'REJECTED') {
      await this.bookMissedFills()
      const theirs = await this.broker.exchangeQty()
      if (theirs !== 0) {
        await protection.alarm(`the exchange rejected the protective ${update.orderType} ${update.side} on ${update.symbol} when it triggered (${update.rejectReason || 'no reason given'}): the position is closed at market`)
        await protection.closeAtMarket(order.kind, theirs)
        await this.bookMissedFills()
      }
    }
    await this.reconcile()
    const held = this.broker.qty
    if (update.status === 'EXPIRED' && held !== 0 && order.side === (held > 0 ? 'SELL' : 'BUY')) {
      await protection.alarm(`the exchange expired the protective ${update.orderType} ${update.side} on ${update.symbol} while the position was open: it was placed again`)
    }
  }

  /**
   * ORDER_TRADE_UPDATE: settles the pending order as soon as the exchange reports it final. Booking is
   * keyed by the client order id: once the REST answer or a lookup booked the order it is no longer
   * pending, so a late (or repeated) event of it changes nothing.
   */
  async onOrderUpdate(update: OrderUpdate): Promise<void> {
    // The exchange closing the position itself (liquidation, ADL): booked from its fill, not a mismatch.
    // A protective order the exchange triggered (its child's id is the clientAlgoId): booked as it is, with its kind.
    const reason = exchangeCloseReason(update.clientOrderId) ?? this.deps.protection?.kindOf(update.clientOrderId)
    if (reason) {
      if ((update.execution === 'TRADE' || update.execution === 'CALCULATED') && update.lastQty > 0) {
        const { orderId, tradeId, clientOrderId, side, lastQty: qty, lastPrice: price, commission: fee, time } = update
        await this.bookExchangeClose({ orderId, tradeId, clientOrderId, side, qty, price, fee, time, reason })
      }
      return
    }
    // Someone else's order on the run's symbol: the run reconciles now (FOREIGN_ORDER while it is open,
    // POSITION_MISMATCH once it filled) rather than at the next reconnect.
    if (!update.clientOrderId.startsWith(this.deps.prefix)) {
      await this.reconcile()
      return
    }
    const id = this.deps.pendingOrder()
    if (id === null || update.clientOrderId !== id) return
    const execution = this.broker.settleUpdate(update)
    if (execution.kind !== 'unknown') await this.book(id, execution)
  }

  /**
   * ACCOUNT_UPDATE's position on the run's symbol: equal to the ledger's, nothing to do; different while
   * an order is pending, that order is looked up now; different otherwise, the run reconciles (REST is
   * the picture: a delayed event's older amount is found to agree, a foreign trade is not).
   */
  async onPosition(amount: number): Promise<void> {
    if (amount === this.broker.qty) return
    if (this.deps.pendingOrder() !== null) await this.resolve()
    else await this.reconcile()
  }

  /**
   * Before a bar's (or step's) order: settles the pending order (`closeTime`, the close's exchange time,
   * lets a long-missing one be given up) and requires a reconciliation that agreed. False: not now.
   */
  async ready(closeTime: number): Promise<boolean> {
    return (this.deps.pendingOrder() === null || (await this.resolve(closeTime))) && (this.agreed || (await this.agree()))
  }

  /**
   * The target to send at this close: the one the template stated now (NaN: none), else the one held while
   * an earlier order was unsettled. Not `ready`: it is held and NaN is answered (no order goes out);
   * sent later, at the first close that is ready. Call it before committing the intent (its send time is saved).
   */
  aim(stated: number, ready: boolean, closeTime: number): number {
    const target = stated === stated ? stated : this.held
    if (!ready) {
      this.held = target
      return Number.NaN
    }
    this.held = Number.NaN
    if (target === target) this.sentAt = closeTime
    return target
  }

  /** reconcile() where a bar waits on it: a failed read (the exchange unreachable) is "not agreed yet", tried again at the next bar. */
  private async agree(): Promise<boolean> {
    try {
      return await this.reconcile()
    } catch (error) {
      if (error instanceof RunFailure) throw error
      return false
    }
  }

  /**
   * A run's MARKET orders leave nothing open. An open order of this strategy that is not pending (an
   * intent given up as never sent that reached the exchange after all) is cancelled by its client order
   * id: nothing of ours should rest, and what it filled is booked by the fills check. An open order that
   * is not ours could change the position at any moment, which this run could not explain: error.
   */
  private async settleOpenOrders(): Promise<boolean> {
    for (const order of await this.broker.openOrders()) {
      if (!order.clientOrderId.startsWith(this.deps.prefix) && !this.deps.protection?.kindOf(order.clientOrderId)) {
        throw new RunFailure(
          'FOREIGN_ORDER',
          `an open ${order.type} ${order.side} order ${order.clientOrderId} on ${order.symbol} is not this strategy's; a run must be the only trader of its symbol on the account: cancel it, then deploy again`,
        )
      }
      if (!(await this.broker.cancel(order.clientOrderId))) return false
    }
    return true
  }

  /**
   * Fills of ours since the last check that the ledger has not booked (an order booked skipped or
   * cancelled that executed after all) are booked once, as one fill per order from its trades; the
   * order row turns filled, so the next check passes it by. Trades of other orders are left to the
   * position check.
   */
  private async bookMissedFills(): Promise<void> {
    for (;;) {
      const since = this.deps.since()
      const from = this.tradesFromId !== undefined ? { fromId: this.tradesFromId } : Number.isFinite(since) ? { startTime: since } : {}
      const trades = await this.broker.trades(from, TRADES_PAGE)
      const byOrder = new Map<number, BinanceTrade[]>()
      for (const trade of trades) byOrder.set(trade.orderId, [...(byOrder.get(trade.orderId) ?? []), trade])
      for (const [orderId, fills] of byOrder) {
        const order = await this.broker.orderById(orderId)
        const reason = exchangeCloseReason(order.clientOrderId) ?? this.deps.protection?.kindOf(order.clientOrderId)
        if (reason) {
          // An exchange-side close the stream did not bring (the runner was down, the socket dropped): booked from its trades.
          for (const t of fills) {
            await this.bookExchangeClose({ orderId, tradeId: t.id, clientOrderId: order.clientOrderId, side: t.side, qty: Number(t.qty), price: Number(t.price), fee: Number(t.commission), time: t.time, reason })
          }
          continue
        }
        if (!order.clientOrderId.startsWith(this.deps.prefix)) continue
        const status = await this.deps.bookedStatus(order.clientOrderId)
        if (status === undefined || status === 'filled') continue
        await this.deps.commit(this.broker.bookTrades(order.side, fills), order.clientOrderId)
      }
      if (trades.length > 0) this.tradesFromId = Math.max(...trades.map((t) => t.id)) + 1
      if (trades.length < TRADES_PAGE) return
    }
  }

  /**
   * Books one fill of an exchange-side close as the run's closing trade (exit_reason liquidation or adl, or a
   * triggered protective order's stop_loss, take_profit or trailing_stop),
   * at the exchange's price and fee, once: the fill's key is saved with the outcome in one commit, so the
   * stream's event, a repeat of it and the REST fills check after a restart book it a single time. The run
   * carries on flat, as a backtest does after a liquidation: its next target may open a position again.
   */
  private async bookExchangeClose(fill: ExchangeCloseFill): Promise<void> {
    const key = `${fill.orderId}:${fill.tradeId}`
    if (this.exchangeFills.includes(key)) return
    this.exchangeFills = [...this.exchangeFills, key].slice(-EXCHANGE_FILLS_KEPT)
    await this.deps.commit(this.broker.bookExchangeClose(fill), undefined)
    metrics.exchangeCloses.inc({ reason: fill.reason })
    await this.protect()
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

  /** Books what sending (or looking up) the intent `id` came to; unknown stays pending, looked up later. */
  async book(id: string, execution: Execution<O>): Promise<void> {
    if (execution.kind === 'unknown') return
    if (execution.kind === 'done') {
      this.refusals = 0
      await this.deps.commit(execution.outcome, id)
      await this.protect()
      return
    }
    // A refusal: nothing happened on the exchange; the intent is booked as skipped, never sent again.
    if (execution.code === -2019) this.refusals++
    await this.deps.commit(this.broker.nothing(this.sentAt ?? this.broker.ledger.lastOpenTime), id)
    if (this.refusals >= MARGIN_REFUSALS_TO_FAIL) {
      throw new RunFailure('MARGIN_REFUSED', `the exchange refused ${this.refusals} orders in a row for insufficient margin (-2019 ${execution.msg})`)
    }
  }
}
