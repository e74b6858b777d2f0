import { roundTo, stepDecimals } from '../../engine/steps.js'
import type { SymbolRules, Trade } from '../../engine/types.js'
import { quantity } from '../../http/decimals.js'
import type { ExchangeAnswer } from '../../trading/binance/answer.js'
import type { BinanceOrder, BinanceTrade, BinanceTradingClient } from '../../trading/binance/trading-client.js'
import { KEY_REFUSED, RunFailure } from '../exchange/run-failure.js'
import type { OrderUpdate } from '../exchange/user-data-streams.js'
import { metrics } from '../../ops/registry.js'

/** What sending (or looking up) one intent came to; `O` is what booking a fill into the run's ledger returns. */
export type Execution<O> = { kind: 'done'; outcome: O } | { kind: 'unknown'; reason: string } | { kind: 'refused'; code: number; msg: string }

/** One fill of an order the exchange placed itself to close a position (from the user stream or userTrades). */
export interface ExchangeCloseFill {
  orderId: number
  tradeId: number
  clientOrderId: string
  side: string
  qty: number
  price: number
  fee: number
  time: number
  /** Why the exchange closed: liquidation, adl, or the kind of a protective order of ours it triggered. */
  reason: Trade['exitReason']
}

/**
 * One symbol of a run's ledger as the exchange path books into it: a one-symbol run's PaperBroker, or one
 * symbol of a many-symbol run's MultiPaperBroker. `O` is what a booking returns for the run to commit.
 */
export interface SymbolLedger<O> {
  /** The signed quantity the ledger holds on the symbol. */
  readonly qty: number
  /** The symbol's last close the run saw, and the open time of the run's last bar or step. */
  readonly lastClose: number
  readonly lastOpenTime: number
  /** Moves the symbol to the signed `qty` by one fill at `price`; `intent` false: the fill settles no order of the run's. */
  fillAt(qty: number, price: number, time: number, intent?: boolean): O
  /** The exchange closed `size` of the position itself (liquidation, ADL) at `price` for `fee`. */
  exchangeClose(size: number, price: number, time: number, reason: Trade['exitReason'], fee: number, clientOrderId: string): O
}

/**
 * Orders the exchange places itself to close a position (research/live-trading.md §1.9): `autoclose-…`
 * (liquidation), `adl_autoclose` (auto-deleverage), `settlement_autoclose-…` (delisting or delivery, booked
 * as a liquidation: the exchange closed it at its price). undefined for any other client order id.
 */
export function exchangeCloseReason(clientOrderId: string): 'liquidation' | 'adl' | undefined {
  if (clientOrderId === 'adl_autoclose' || clientOrderId.startsWith('adl_autoclose')) return 'adl'
  if (clientOrderId.startsWith('autoclose-') || clientOrderId.startsWith('settlement_autoclose-')) return 'liquidation'
  return undefined
}

/** A live order sent, in perpetua_live_orders_total: accepted, rejected (or never sent: unavailable), or no answer (unknown). */
function countOrder(answer: ExchangeAnswer<unknown>): void {
  metrics.liveOrders.inc({ outcome: answer.kind === 'ok' ? 'accepted' : answer.kind === 'unknown' ? 'unknown' : 'rejected' })
}

/** A look-up of an order whose outcome was unknown, in perpetua_live_order_lookups_total; returns `result`. */
function lookedUp<T>(outcome: 'found' | 'not_found' | 'failed', result: T): T {
  metrics.liveOrderLookups.inc({ outcome })
  return result
}

/** Order statuses after which a MARKET order changes nothing more. */
const FINAL = new Set(['FILLED', 'CANCELED', 'EXPIRED', 'REJECTED', 'EXPIRED_IN_MATCH'])

/**
 * One symbol's side of a live run on the exchange: signed MARKET orders under the run's client order ids,
 * lookups, the symbol's position, open orders and fills; only what the exchange reports moves the ledger
 * (`SymbolLedger`). It never resends an intent: an unknown outcome stays unknown until a lookup by client
 * order id settles it. A one-symbol run has one (ExchangeBroker), a many-symbol run one per symbol.
 */
export class SymbolExchange<O> {
  protected readonly decimals: number

  constructor(
    readonly ledger: SymbolLedger<O>,
    protected client: BinanceTradingClient,
    readonly symbol: string,
    protected readonly rules: SymbolRules,
    private readonly leverage: number,
  ) {
    this.decimals = stepDecimals(rules.stepSize)
  }

  get qty(): number {
    return this.ledger.qty
  }

  /** Trades with freshly opened credentials from now on (after a reconnect: a deleted or replaced key shows up). */
  useClient(client: BinanceTradingClient): void {
    this.client = client
  }

  /**
   * Before the first order: one-way mode (refused otherwise), then the symbol's leverage and isolated
   * margin, each idempotent (-4046 "No need to change margin type", -4059 "No need to change position side").
   */
  async prepare(): Promise<void> {
    const mode = need(await this.client.positionMode(), 'read the position mode')
    if (mode.dualSidePosition) throw new RunFailure('HEDGE_MODE', 'the account is in Hedge Mode; live runs need One-way Mode (positionSide BOTH)')
    need(await this.client.setLeverage(this.symbol, this.leverage), `set leverage ${this.leverage} on ${this.symbol}`)
    const margin = await this.client.setMarginType(this.symbol, 'ISOLATED')
    if (!(margin.kind === 'rejected' && (margin.code === -4046 || margin.code === -4059))) need(margin, `set isolated margin on ${this.symbol}`)
  }

  /**
   * Sends the intent `clientOrderId` (already committed) moving the symbol to the signed quantity `desired`
   * (the engine's sizing, done by the caller) as one MARKET order, reduce-only when it only shrinks the position.
   */
  async sendQty(clientOrderId: string, desired: number, price: number, time: number): Promise<Execution<O>> {
    const current = this.qty
    const delta = roundTo(desired - current, this.decimals)
    if (delta === 0) return { kind: 'done', outcome: this.ledger.fillAt(current, price, time) }
    const reduceOnly = desired === 0 || (Math.sign(desired) === Math.sign(current) && Math.abs(desired) < Math.abs(current))
    const answer = await this.client.placeOrder({
      symbol: this.symbol,
      side: delta > 0 ? 'BUY' : 'SELL',
      type: 'MARKET',
      quantity: quantity(Math.abs(delta), this.rules),
      reduceOnly,
      clientOrderId,
    })
    countOrder(answer)
    return this.settle(answer, clientOrderId)
  }

  /**
   * Reduce-only MARKET order for exactly the exchange's position (pause with close_positions): sized from
   * the exchange, not our ledger, so it can only shrink whatever is open; the ledger is booked flat at its price.
   * `flat`: nothing open on the exchange nor in the ledger, so nothing was sent and there is nothing to book.
   */
  async close(clientOrderId: string, time: number): Promise<Execution<O> | { kind: 'flat' }> {
    const theirs = await this.exchangeQty()
    if (theirs === 0 && this.ledger.qty === 0) return { kind: 'flat' }
    if (theirs === 0) return { kind: 'done', outcome: this.ledger.fillAt(0, this.ledger.lastClose, time) }
    const answer = await this.client.placeOrder({
      symbol: this.symbol,
      side: theirs > 0 ? 'SELL' : 'BUY',
      type: 'MARKET',
      quantity: quantity(Math.abs(theirs), this.rules),
      reduceOnly: true,
      clientOrderId,
    })
    countOrder(answer)
    if (answer.kind === 'ok' && answer.value.status === 'FILLED') {
      return { kind: 'done', outcome: this.ledger.fillAt(0, Number(answer.value.avgPrice), answer.value.updateTime) }
    }
    return this.settle(answer, clientOrderId)
  }

  /**
   * Looks a sent intent up by client order id: GET /fapi/v1/order, then the symbol's recent orders
   * (a second index: the single lookup may "forget" an order it accepted). Not found stays unknown.
   */
  async lookUp(clientOrderId: string, sentAfter: number): Promise<Execution<O>> {
    const found = await this.client.order(this.symbol, { clientOrderId })
    if (found.kind === 'ok') return lookedUp('found', this.settle(found, clientOrderId))
    if (found.kind === 'rejected' && KEY_REFUSED.has(found.code)) throw lookedUp('failed', keyRefused(found))
    const recent = await this.client.allOrders(this.symbol, sentAfter === sentAfter ? { startTime: sentAfter - 60_000, limit: 1000 } : { limit: 1000 })
    if (recent.kind === 'ok') {
      const order = recent.value.find((o) => o.clientOrderId === clientOrderId)
      if (order) return lookedUp('found', this.settle({ kind: 'ok', value: order }, clientOrderId))
    } else if (recent.kind === 'rejected' && KEY_REFUSED.has(recent.code)) throw lookedUp('failed', keyRefused(recent))
    // Not in the list of recent orders is not found; no list at all is a look-up that failed.
    return lookedUp(recent.kind === 'ok' ? 'not_found' : 'failed', { kind: 'unknown', reason: `order ${clientOrderId} was not found yet, which does not prove it was not placed` })
  }

  /** The exchange's signed position on the symbol (one-way mode: one row, positionSide BOTH). */
  async exchangeQty(): Promise<number> {
    const rows = need(await this.client.positions(this.symbol), 'read the position')
    return roundTo(rows.filter((r) => r.symbol === this.symbol).reduce((sum, r) => sum + Number(r.positionAmt), 0), this.decimals)
  }

  /**
   * An ORDER_TRADE_UPDATE of a sent order, booked as its REST answer would be (the same executed
   * quantity, average price and time), so whichever reports first books the same fill.
   */
  settleUpdate(update: OrderUpdate): Execution<O> {
    return this.outcomeOf(update.clientOrderId, update.status, update.side, update.executedQty, update.avgPrice, update.time)
  }

  /** The fills of one order as the exchange's trades report them (an order our ledger never booked), booked as one. */
  bookTrades(side: string, trades: readonly BinanceTrade[]): O {
    let qty = 0
    let notional = 0
    for (const trade of trades) {
      qty += Number(trade.qty)
      notional += Number(trade.qty) * Number(trade.price)
    }
    const time = Math.max(...trades.map((t) => t.time))
    const signed = side === 'BUY' ? qty : -qty
    return this.ledger.fillAt(roundTo(this.qty + signed, this.decimals), trades.length === 1 ? Number(trades[0]!.price) : notional / qty, time)
  }

  /**
   * A fill of an order the exchange placed itself (ExchangeCloseFill): the run's closing trade at the
   * exchange's price and fee. When the ledger no longer holds the side it closed (the run's own reversal,
   * executed on the exchange after the close, was booked first), the fill is still the exchange's: it moves
   * the ledger by its size at its price, so the ledger holds what the exchange holds (equity is the same
   * either way; only which trade carries which price differs) instead of ending the run in a mismatch.
   */
  bookExchangeClose(fill: ExchangeCloseFill): O {
    const held = this.qty
    const signed = fill.side === 'BUY' ? fill.qty : -fill.qty
    if (held !== 0 && Math.sign(signed) === -Math.sign(held)) {
      return this.ledger.exchangeClose(Math.min(Math.abs(held), fill.qty), fill.price, fill.time, fill.reason, fill.fee, fill.clientOrderId)
    }
    return this.ledger.fillAt(roundTo(held + signed, this.decimals), fill.price, fill.time, false)
  }

  /** The intent booked as changing nothing (a refusal: nothing happened on the exchange). */
  nothing(time: number): O {
    return this.ledger.fillAt(this.qty, this.ledger.lastClose, time)
  }

  /** The symbol's open orders (GET /fapi/v1/openOrders). */
  async openOrders(): Promise<BinanceOrder[]> {
    return need(await this.client.openOrders(this.symbol), 'read the open orders')
  }

  /** Cancels an open order by client order id; true when it is gone (cancelled, or -2011: no longer open), false when the answer is unknown. */
  async cancel(clientOrderId: string): Promise<boolean> {
    const answer = await this.client.cancelOrder(this.symbol, { clientOrderId })
    if (answer.kind === 'ok' || (answer.kind === 'rejected' && answer.code === -2011)) return true
    if (answer.kind === 'rejected' && KEY_REFUSED.has(answer.code)) throw keyRefused(answer)
    return false
  }

  /** The account's fills on the symbol from trade id `fromId` on, or from `startTime` when no id is known yet (one page, oldest first; neither: the latest). */
  async trades(from: { fromId?: number; startTime?: number }, limit: number): Promise<BinanceTrade[]> {
    return need(await this.client.userTrades(this.symbol, { ...from, limit }), 'read the fills (userTrades)')
  }

  /** One order by the exchange's id (a trade names its order by this id only). */
  async orderById(orderId: number): Promise<BinanceOrder> {
    return need(await this.client.order(this.symbol, { orderId }), `look order ${orderId} up`)
  }

  private settle(answer: ExchangeAnswer<BinanceOrder>, clientOrderId: string): Execution<O> {
    if (answer.kind === 'unknown') return answer
    if (answer.kind === 'unavailable') return { kind: 'refused', code: 0, msg: answer.reason }
    if (answer.kind === 'rejected') {
      if (KEY_REFUSED.has(answer.code)) throw keyRefused(answer)
      return { kind: 'refused', code: answer.code, msg: answer.msg }
    }
    const order = answer.value
    return this.outcomeOf(clientOrderId, order.status, order.side, Number(order.executedQty), Number(order.avgPrice), order.updateTime)
  }

  private outcomeOf(clientOrderId: string, status: string, side: string, executed: number, avgPrice: number, time: number): Execution<O> {
    if (!FINAL.has(status)) return { kind: 'unknown', reason: `order ${clientOrderId} is ${status}` }
    if (!(executed > 0)) return { kind: 'done', outcome: this.ledger.fillAt(this.qty, this.ledger.lastClose, time) }
    const signed = side === 'BUY' ? executed : -executed
    return { kind: 'done', outcome: this.ledger.fillAt(roundTo(this.qty + signed, this.decimals), avgPrice, time) }
  }
}

function need<T>(answer: ExchangeAnswer<T>, what: string): T {
  if (answer.kind === 'ok') return answer.value
  if (answer.kind === 'rejected' && KEY_REFUSED.has(answer.code)) throw keyRefused(answer)
  if (answer.kind === 'rejected') throw new RunFailure('ORDER_REFUSED', `the exchange refused to ${what}: ${answer.code} ${answer.msg}`)
  throw new Error(`could not ${what}: ${answer.reason}`)
}

function keyRefused(answer: { code: number; msg: string }): RunFailure {
  return new RunFailure('KEY_REVOKED', `the exchange refused the key (${answer.code} ${answer.msg}); register a working key and deploy again`)
}
