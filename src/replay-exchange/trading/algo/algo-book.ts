import crypto from 'node:crypto'
import { BinanceError } from '../../common/errors.js'
import type { Faults } from '../../common/faults.js'
import type { Market } from '../../market-data/market.js'
import { priceAt } from '../../market-data/prices.js'
import { type Account, type Order, positionOf } from '../accounts/account.js'
import type { UserStreams } from '../user-stream/user-streams.js'
import type { Venue, VenueAlgo } from '../venue.js'
import { type AlgoOrder, MAX_OPEN_ALGO_ORDERS } from './algo-order.js'
import type { AlgoRequest } from './algo-request.js'
import { algoUpdate } from './algo-views.js'
import { firstTrigger, latestPrice, trackExtreme, wouldTriggerNow } from './triggers.js'

export type AlgoEventOrder = 'fill-first' | 'triggered-first'

/** The path the algo faults match (`reject`, `algoEvents`): they concern the account's algo orders, not one request. */
const ALGO_PATH = '/fapi/v1/algoOrder'

/** The rm of a `{ algo: 'reject' }` fault: the matching engine's margin-check refusal, the ALGO_UPDATE page's example of REJECTED. */
const FAULT_REJECT_MESSAGE = 'Margin is insufficient.'

/**
 * The per-account algo book: places, cancels and triggers conditional orders. Triggers are events
 * of the venue's settle walk (as resting fills, funding and liquidations), applied at their replay
 * time; a triggered order places its child through the venue (fees, position, ACCOUNT_UPDATE) with
 * the clientAlgoId as client order id, and ALGO_UPDATE follows each status change.
 */
export class AlgoBook implements VenueAlgo {
  /** The algo order being triggered: its child's end is held back until TRIGGERED has gone out (fill-first). */
  private pending: { order: AlgoOrder; triggeredSent: boolean; ended: boolean } | undefined

  constructor(
    private readonly venue: Venue,
    private readonly market: Market,
    private readonly streams: UserStreams,
    private readonly faults: Faults,
    private readonly wallNow: () => number,
    private readonly eventOrder: AlgoEventOrder,
  ) {}

  /**
   * Accepts a new algo order after the account checks: -4116 clientAlgoId of an open algo order,
   * -4045 past 200 open conditional orders, -4130 a second close-all order of the same type and
   * side, -2021 a trigger already crossed (trailing: an activation price on the wrong side).
   */
  place(account: Account, request: AlgoRequest, url: string): AlgoOrder {
    const now = this.venue.now()
    const symbol = this.market.get(request.symbol.symbol)!
    const open = [...account.openAlgo.values()]
    if (request.clientAlgoId !== undefined && open.some((o) => o.clientAlgoId === request.clientAlgoId)) throw new BinanceError(400, -4116, 'ClientOrderId is duplicated.')
    if (open.length >= MAX_OPEN_ALGO_ORDERS) throw new BinanceError(400, -4045, 'Reach max stop order limit.')
    if (request.closePosition && open.some((o) => o.closePosition && o.status === 'NEW' && o.symbol === symbol.info.symbol && o.type === request.type && o.side === request.side)) {
      throw new BinanceError(400, -4130, 'An open stop or take profit order with GTE and closePosition in the direction is existing.')
    }
    const trailing = request.type === 'TRAILING_STOP_MARKET'
    const latest = latestPrice(symbol, request.workingType, now)
    if (trailing) {
      const activate = request.activatePrice
      if (activate !== undefined && (request.side === 'BUY' ? activate >= latest : activate <= latest)) throw wouldTrigger()
    } else if (wouldTriggerNow(symbol, { ...request }, now)) {
      throw wouldTrigger()
    }
    const unknown = this.faults.take(url, 'algoUnknown', account.apiKey)
    const algoId = this.venue.ids.algo++
    const order: AlgoOrder = {
      algoId,
      clientAlgoId: request.clientAlgoId ?? generatedAlgoId(algoId),
      symbol: symbol.info.symbol,
      side: request.side,
      type: request.type,
      timeInForce: request.timeInForce,
      quantity: request.quantity,
      price: request.price,
      triggerPrice: request.triggerPrice,
      workingType: request.workingType,
      closePosition: request.closePosition,
      priceProtect: request.priceProtect,
      reduceOnly: request.reduceOnly,
      // Unsent, it is the price at placement, on the tick as every price the exchange shows (a mark price has more places).
      activatePrice: trailing ? (request.activatePrice ?? Math.round(latest / symbol.info.tickSize) * symbol.info.tickSize) : 0,
      activateSent: request.activatePrice !== undefined,
      callbackRate: request.callbackRate,
      status: 'NEW',
      createTime: now,
      updateTime: now,
      triggerTime: 0,
      actualOrderId: 0,
      extreme: latest,
      trackedUntil: now,
      rejectReason: '',
      hiddenUntil: unknown ? this.wallNow() + unknown.latencyMs! : 0,
    }
    account.algoOrders.set(algoId, order)
    account.openAlgo.set(algoId, order)
    this.venue.changed = true
    this.emit(account, order, now)
    return order
  }

  /** Cancels a waiting algo order; -2011 when it is unknown or no longer waits (a triggered one's child is cancelled on /fapi/v1/order). */
  cancel(account: Account, order: AlgoOrder | undefined): AlgoOrder {
    if (!order || order.status !== 'NEW') throw new BinanceError(400, -2011, 'Unknown order sent.')
    this.end(account, order, 'CANCELED', this.venue.now())
    return order
  }

  cancelAll(account: Account, symbol: string): void {
    const now = this.venue.now()
    for (const order of [...account.openAlgo.values()]) if (order.symbol === symbol && order.status === 'NEW') this.end(account, order, 'CANCELED', now)
  }

  /** Whether the query endpoints know the order now (the `algo: 'unknown'` fault hides a fresh one for a while). */
  visible(order: AlgoOrder): boolean {
    return order.hiddenUntil <= this.wallNow()
  }

  /** The child order in the matching engine, once triggered. */
  child(account: Account, order: AlgoOrder): Order | undefined {
    return order.actualOrderId ? account.orders.get(order.actualOrderId) : undefined
  }

  nextTrigger(account: Account, cursor: number, now: number): { time: number; apply: () => void } | undefined {
    let next: { time: number; apply: () => void } | undefined
    for (const order of account.openAlgo.values()) {
      if (order.status !== 'NEW') continue
      const symbol = this.market.get(order.symbol)!
      trackExtreme(symbol, order, cursor)
      const time = firstTrigger(symbol, order, cursor, now)
      if (time !== undefined && (!next || time < next.time)) next = { time, apply: () => this.trigger(account, order, time) }
    }
    return next
  }

  settled(account: Account, now: number): void {
    for (const order of account.openAlgo.values()) if (order.status === 'NEW') trackExtreme(this.market.get(order.symbol)!, order, now)
  }

  /** GTE: close-all orders guarding a position that went to zero (or reversed) expire, by any fill (research §1.4). */
  positionChanged(account: Account, symbol: string, before: number, after: number, time: number): void {
    if (before === 0 || (after !== 0 && Math.sign(after) === Math.sign(before))) return
    const closing = before > 0 ? 'SELL' : 'BUY'
    for (const order of [...account.openAlgo.values()]) {
      if (order.status === 'NEW' && order.closePosition && order.symbol === symbol && order.side === closing) this.end(account, order, 'EXPIRED', time)
    }
  }

  childEnded(account: Account, child: Order, time: number): void {
    const order = account.algoOrders.get(child.algoId!)
    if (!order || order.status === 'FINISHED') return
    if (this.pending?.order === order && !this.pending.triggeredSent) {
      this.pending.ended = true
      return
    }
    this.end(account, order, 'FINISHED', time)
  }

  /**
   * The condition held at `time`: TRIGGERING, then the child goes to the matching engine (a MARKET
   * filling at the path price of that moment, or the LIMIT of STOP / TAKE_PROFIT) and the order is
   * TRIGGERED, then FINISHED when the child has ended. A child the matching engine refuses (margin,
   * reduce-only with nothing to reduce, a post-only that would cross) leaves the order REJECTED with `rm`.
   */
  private trigger(account: Account, order: AlgoOrder, time: number): void {
    const symbol = this.market.get(order.symbol)!
    order.status = 'TRIGGERING'
    order.triggerTime = time
    order.updateTime = time
    this.venue.changed = true
    this.emit(account, order, time)
    if (this.faults.take(ALGO_PATH, 'algoReject', account.apiKey)) return this.reject(account, order, time, FAULT_REJECT_MESSAGE)
    const eventOrder = this.faults.take(ALGO_PATH, 'algoEvents', account.apiKey)?.algoEvents ?? this.eventOrder
    const amount = positionOf(account, order.symbol).amount
    const direction = order.side === 'BUY' ? 1 : -1
    const reducible = Math.sign(amount) === -direction ? Math.abs(amount) : 0
    const quantity = order.closePosition ? reducible : order.quantity
    if ((order.closePosition || order.reduceOnly) && reducible === 0) return this.reject(account, order, time, 'ReduceOnly Order is rejected.')
    const limit = order.type === 'STOP' || order.type === 'TAKE_PROFIT'
    const tick = symbol.info.tickSize
    const pending = { order, triggeredSent: false, ended: false }
    this.pending = pending
    try {
      this.venue.placeChild(
        account,
        {
          symbol: symbol.info,
          side: order.side,
          type: limit ? 'LIMIT' : 'MARKET',
          timeInForce: limit ? order.timeInForce : 'GTC',
          quantity,
          price: limit ? order.price : 0,
          reduceOnly: order.closePosition || order.reduceOnly,
          clientOrderId: order.clientAlgoId,
          respType: 'RESULT',
        },
        {
          time,
          price: Math.round((priceAt(symbol, time) ?? 0) / tick) * tick,
          fields: {
            origType: order.type,
            stopPrice: order.triggerPrice,
            workingType: order.workingType,
            closePosition: order.closePosition,
            priceProtect: order.priceProtect,
            algoId: order.algoId,
          },
          onAccepted: (child) => {
            order.actualOrderId = child.orderId
            order.status = 'TRIGGERED'
            if (eventOrder === 'triggered-first') {
              pending.triggeredSent = true
              this.emit(account, order, time, true)
            }
          },
        },
      )
    } catch (error) {
      if (!(error instanceof BinanceError)) throw error
      return this.reject(account, order, time, error.message)
    } finally {
      this.pending = undefined
    }
    if (!pending.triggeredSent) this.emit(account, order, time, true)
    if (pending.ended) this.end(account, order, 'FINISHED', time)
  }

  private reject(account: Account, order: AlgoOrder, time: number, message: string): void {
    order.rejectReason = message
    this.end(account, order, 'REJECTED', time)
  }

  private end(account: Account, order: AlgoOrder, status: 'CANCELED' | 'EXPIRED' | 'FINISHED' | 'REJECTED', time: number): void {
    order.status = status
    order.updateTime = time
    account.openAlgo.delete(order.algoId)
    this.venue.changed = true
    this.emit(account, order, time)
  }

  private emit(account: Account, order: AlgoOrder, time: number, placedOnly = false): void {
    if (!this.streams.listening(account.apiKey)) return
    this.streams.emit(account.apiKey, algoUpdate(this.market.get(order.symbol)!.info, order, time, this.child(account, order), placedOnly))
  }
}

const wouldTrigger = () => new BinanceError(400, -2021, 'Order would immediately trigger.')

/** A clientAlgoId as Binance generates when none is sent: 22 letters and digits (derived from the algoId, so runs repeat). */
function generatedAlgoId(seed: number): string {
  return crypto.createHash('sha256').update(`algo${seed}`).digest('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 22)
}
