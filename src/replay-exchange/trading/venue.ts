import crypto from 'node:crypto'
import { BINANCE_BTCUSDT_BRACKETS, type MaintenanceBracket } from '../../binance-formats/leverage-brackets.js'
import { BinanceError } from '../common/errors.js'
import type { ReplayClock } from '../common/clock.js'
import { fundingEvent, fundingTimes } from '../market-data/funding.js'
import type { Market } from '../market-data/market.js'
import type { MarketSymbol } from '../market-data/market-symbol.js'
import { markPrice } from '../market-data/premium.js'
import { priceAt } from '../market-data/prices.js'
import { lastTrade } from '../market-data/trades.js'
import { type Account, configOf, type IncomeType, newAccount, type Order, positionOf, round8, type Side, type Trade } from './accounts/account.js'
import { firstTouch } from './orders/first-touch.js'
import type { OrderRequest } from './orders/order-request.js'
import { applyFill, roundQty } from './positions/apply-fill.js'
import { isolatedLiquidationPrice, marginSummary, orderInitialMargin } from './positions/margin.js'
import { accountUpdate, type AccountUpdateReason, type ExecutionType, orderTradeUpdate } from './user-stream/events.js'
import type { UserStreams } from './user-stream/user-streams.js'

/** Binance VIP 0 fees (GET /fapi/v1/commissionRate): maker 0.02 %, taker 0.05 %, charged in USDT. */
export const MAKER_RATE = 0.0002
export const TAKER_RATE = 0.0005

export const unknownOrder = () => new BinanceError(400, -2013, 'Order does not exist.')
export const unknownCancel = () => new BinanceError(400, -2011, 'Unknown order sent.')

/** What an `executeThen` fault answers once the request has executed: Binance's "execution status unknown" (503 -1000, or 408 -1007). */
export function lostAnswer(executeThen: 503 | -1007): BinanceError {
  return executeThen === 503
    ? new BinanceError(503, -1000, 'Unknown error, please check your request or try again later.')
    : new BinanceError(408, -1007, 'Timeout waiting for response from backend server. Send status unknown; execution status unknown.')
}

/** The counters the exchange hands out; kept in the --state file so ids never repeat across restarts. */
export interface VenueIds {
  order: number
  trade: number
  tran: number
  algo: number
}

/**
 * The algo service as the venue sees it (trading/algo/ implements it): its triggers are events of
 * the settle walk, and it hears of positions that closed and of child orders that ended.
 */
export interface VenueAlgo {
  /** The account's earliest algo trigger in (cursor, now], to apply at its time. */
  nextTrigger(account: Account, cursor: number, now: number): { time: number; apply: () => void } | undefined
  /** The walk reached `now`: trailing extremes are brought up to it. */
  settled(account: Account, now: number): void
  /** A fill moved the position from `before` to `after`. */
  positionChanged(account: Account, symbol: string, before: number, after: number, time: number): void
  /** A triggered algo order's child order filled, was canceled or expired. */
  childEnded(account: Account, order: Order, time: number): void
}

/** What a triggered algo order's child carries besides the request: the fill price at the trigger moment and the algo order's fields. */
export interface ChildOrder {
  price: number
  time: number
  fields: Pick<Order, 'origType' | 'stopPrice' | 'workingType' | 'closePosition' | 'priceProtect' | 'algoId'>
  /** Called once the child is accepted, before its NEW and any fill go out. */
  onAccepted: (order: Order) => void
}

/**
 * The trading wing's matching engine and ledger: accounts, orders, fills, positions, funding and
 * liquidation over the replay's price path (README "Fill model"). Every change is settled in
 * replay time: before an account is read or trades, `settle` walks the path from where it last
 * stopped to now and applies, in time order, resting-order fills, funding and liquidations.
 */
export class Venue {
  readonly accounts = new Map<string, Account>()
  ids: VenueIds = { order: 8_000_000_001, trade: 500_000_001, tran: 9_000_000_001, algo: 3_000_000_000_001 }
  /** Set on every change; the state file is written when it is. */
  changed = false
  /** The algo service, once the trading wing has attached it. */
  algo: VenueAlgo | undefined

  constructor(
    private readonly market: Market,
    private readonly clock: ReplayClock,
    private readonly streams: UserStreams,
  ) {}

  now(): number {
    return this.clock.now()
  }

  /** A symbol's margin tiers (the data folder's snapshot, else the BTCUSDT sample). */
  readonly brackets = (symbol: string): readonly MaintenanceBracket[] => this.market.brackets.get(symbol) ?? BINANCE_BTCUSDT_BRACKETS

  create(apiKey: string, secretKey: string, balances: Map<string, number>): Account {
    if (this.accounts.has(apiKey)) throw new Error(`account ${apiKey.slice(0, 8)}… exists`)
    const account = newAccount(apiKey, secretKey, balances, this.now())
    this.accounts.set(apiKey, account)
    this.changed = true
    return account
  }

  /** Adds to (or, negative, takes from) a balance; an ACCOUNT_UPDATE DEPOSIT for USDT. */
  fund(account: Account, asset: string, amount: number): number {
    const balance = round8((account.balances.get(asset) ?? 0) + amount)
    if (balance < 0) throw new Error(`the ${asset} balance would go below zero`)
    account.balances.set(asset, balance)
    account.updateTime = this.now()
    this.changed = true
    if (asset === 'USDT') this.emitAccount(account, 'DEPOSIT', amount)
    return balance
  }

  /** A symbol orders can trade: TRADING in the snapshot with market data at replay now. */
  tradable(name: string): MarketSymbol | undefined {
    const symbol = this.market.get(name)
    return symbol && priceAt(symbol, this.now()) !== undefined ? symbol : undefined
  }

  /** The price a MARKET order fills at: the latest trade's (the ticker's lastPrice), else the path's on the tick grid. */
  lastPrice(symbol: MarketSymbol, time = this.now()): number {
    const trade = lastTrade(symbol, time)
    if (trade) return trade.price
    const tick = symbol.info.tickSize
    return Math.round((priceAt(symbol, time) ?? 0) / tick) * tick
  }

  mark(name: string, time = this.now()): number {
    const symbol = this.market.get(name)
    return (symbol && markPrice(symbol, time)?.mark) ?? 0
  }

  /**
   * Places an order after Binance's account checks (-4116 duplicate client id among open orders,
   * -2022 reduce-only with nothing to reduce, -5022 post-only that would cross, -5021 FOK that
   * cannot fill, -2019 margin) and executes what the fill model fills at once. Returns the order
   * as the ACK response shows it (NEW) and as it stands after execution (RESULT).
   */
  place(account: Account, request: OrderRequest): { ack: Order; result: Order } {
    this.settle(account)
    return this.execute(account, request, this.now())
  }

  /** Places a triggered algo order's child at the trigger moment; throws the BinanceError that refuses it (the algo order is then REJECTED). */
  placeChild(account: Account, request: OrderRequest, child: ChildOrder): Order {
    return this.execute(account, request, child.time, child).result
  }

  private execute(account: Account, request: OrderRequest, now: number, child?: ChildOrder): { ack: Order; result: Order } {
    const symbol = this.market.get(request.symbol.symbol)!
    if (request.clientOrderId !== undefined) {
      for (const open of account.open.values()) {
        if (open.clientOrderId === request.clientOrderId) throw new BinanceError(400, -4116, 'ClientOrderId is duplicated.')
      }
    }
    const amount = positionOf(account, symbol.info.symbol).amount
    const direction = request.side === 'BUY' ? 1 : -1
    if (request.reduceOnly && !(amount !== 0 && Math.sign(amount) === -direction)) throw new BinanceError(400, -2022, 'ReduceOnly Order is rejected.')
    const market = child?.price ?? this.lastPrice(symbol, now)
    const crosses = request.type === 'MARKET' || (request.side === 'BUY' ? request.price >= market : request.price <= market)
    if (request.type === 'LIMIT' && request.timeInForce === 'GTX' && crosses) {
      throw new BinanceError(400, -5022, 'Due to the order could not be executed as maker, the Post Only order will be rejected.')
    }
    if (request.type === 'LIMIT' && request.timeInForce === 'FOK' && !crosses) {
      throw new BinanceError(400, -5021, 'Due to the order could not be filled immediately, the FOK order has been rejected.')
    }
    const order: Order = {
      orderId: this.ids.order++,
      clientOrderId: request.clientOrderId ?? generatedClientId(this.ids.order),
      symbol: symbol.info.symbol,
      side: request.side,
      type: request.type,
      timeInForce: request.timeInForce,
      origQty: request.quantity,
      price: request.price,
      reduceOnly: request.reduceOnly,
      status: 'NEW',
      executedQty: 0,
      cumQuote: 0,
      time: now,
      updateTime: now,
      expireReason: 0,
      ...child?.fields,
    }
    const fee = (crosses ? request.quantity * market : 0) * TAKER_RATE
    const required = orderInitialMargin(account, { ...order, price: crosses ? market : order.price }) + fee
    if (!request.reduceOnly && required > marginSummary(account, (s) => this.mark(s, now), this.brackets).available + 1e-9) {
      this.ids.order--
      throw new BinanceError(400, -2019, 'Margin is insufficient.')
    }
    account.orders.set(order.orderId, order)
    account.open.set(order.orderId, order)
    this.changed = true
    const ack = { ...order }
    child?.onAccepted(order)
    this.emitOrder(account, order, 'NEW', now)
    if (crosses) this.fill(account, order, request.quantity, market, false, now)
    else if (request.timeInForce === 'IOC') this.finish(account, order, 'EXPIRED', now, 2)
    return { ack, result: { ...order } }
  }

  /** Cancels an open order; -2011 when it is unknown or no longer open. */
  cancel(account: Account, order: Order | undefined): Order {
    this.settle(account)
    if (!order || !account.open.has(order.orderId)) throw unknownCancel()
    this.finish(account, order, 'CANCELED', this.now())
    return { ...order }
  }

  cancelAll(account: Account, symbol: string): void {
    this.settle(account)
    const now = this.now()
    for (const order of [...account.open.values()]) if (order.symbol === symbol) this.finish(account, order, 'CANCELED', now)
  }

  /** Settles every account with something to settle (the exchange's timer). */
  settleAll(): void {
    for (const account of this.accounts.values()) {
      if (account.open.size > 0 || account.openAlgo.size > 0 || hasPosition(account)) this.settle(account)
      else account.settledUntil = this.now()
    }
  }

  /**
   * Walks replay time from where the account was last settled to now, applying the earliest due
   * event each step: a resting limit order touched by the path (fills whole, as maker, at its
   * price), a funding time of a symbol with a position, an isolated position's liquidation price.
   */
  settle(account: Account): void {
    const now = this.now()
    let cursor = account.settledUntil
    for (let guard = 0; guard < 10_000 && cursor < now; guard++) {
      let next: { time: number; apply: () => void } | undefined
      const consider = (time: number | undefined, apply: () => void) => {
        if (time !== undefined && time <= now && (!next || time < next.time)) next = { time, apply }
      }
      for (const order of account.open.values()) {
        if (order.type !== 'LIMIT') continue
        const symbol = this.market.get(order.symbol)!
        consider(firstTouch(symbol, cursor, now, order.price, order.side === 'BUY' ? 'down' : 'up'), () => this.fillResting(account, order))
      }
      for (const [name, position] of account.positions) {
        if (position.amount === 0) continue
        const symbol = this.market.get(name)!
        const [funding] = fundingTimes(symbol, cursor + 1, now, 1, false)
        consider(funding, () => this.settleFunding(account, symbol, funding!))
        const liquidation = isolatedLiquidationPrice(account, name, this.brackets)
        if (liquidation > 0) {
          const time = firstTouch(symbol, cursor, now, liquidation, position.amount > 0 ? 'down' : 'up')
          consider(time, () => this.liquidate(account, symbol, liquidation, time!))
        }
      }
      const trigger = account.openAlgo.size > 0 ? this.algo?.nextTrigger(account, cursor, now) : undefined
      if (trigger) consider(trigger.time, trigger.apply)
      if (!next) break
      cursor = next.time
      account.settledUntil = cursor
      const event: { time: number; apply: () => void } = next
      this.eventTime = event.time
      event.apply()
      this.eventTime = undefined
    }
    account.settledUntil = now
    if (account.openAlgo.size > 0) this.algo?.settled(account, now)
  }

  /** The time of the event being applied while settling (fills and funding happen then, not at the check). */
  private eventTime: number | undefined

  private fillResting(account: Account, order: Order): void {
    const time = this.eventTime ?? this.now()
    this.fill(account, order, roundQty(order.origQty - order.executedQty), order.price, true, time)
  }

  /** Executes `qty` of the order at `price`: position, realized PnL, fee, trade and income rows, and the events. */
  private fill(account: Account, order: Order, qty: number, price: number, maker: boolean, time: number): void {
    if (order.reduceOnly) {
      const amount = positionOf(account, order.symbol).amount
      const reducible = Math.sign(amount) === (order.side === 'BUY' ? -1 : 1) ? Math.abs(amount) : 0
      if (reducible === 0) return this.finish(account, order, 'EXPIRED', time, 4)
      qty = Math.min(qty, reducible)
    }
    const before = positionOf(account, order.symbol).amount
    const realized = applyFill(account, order.symbol, order.side, qty, price, time)
    const commission = round8(qty * price * (maker ? MAKER_RATE : TAKER_RATE))
    account.balances.set('USDT', round8((account.balances.get('USDT') ?? 0) - commission))
    const trade: Trade = {
      id: this.ids.trade++,
      orderId: order.orderId,
      symbol: order.symbol,
      side: order.side,
      price,
      qty,
      quoteQty: qty * price,
      commission,
      realizedPnl: realized,
      maker,
      time,
    }
    account.trades.push(trade)
    if (realized !== 0) this.income(account, order.symbol, 'REALIZED_PNL', realized, time, String(trade.id))
    this.income(account, order.symbol, 'COMMISSION', -commission, time, String(trade.id))
    order.executedQty = roundQty(order.executedQty + qty)
    order.cumQuote += qty * price
    order.updateTime = time
    const complete = order.executedQty >= order.origQty
    order.status = complete ? 'FILLED' : 'PARTIALLY_FILLED'
    if (complete) account.open.delete(order.orderId)
    else if (order.reduceOnly) {
      order.status = 'EXPIRED'
      order.expireReason = 4
      account.open.delete(order.orderId)
    }
    account.updateTime = time
    this.changed = true
    this.emitOrder(account, order, 'TRADE', time, trade)
    this.emitAccount(account, 'ORDER', 0, order.symbol, time)
    this.algo?.positionChanged(account, order.symbol, before, positionOf(account, order.symbol).amount, time)
    if (order.algoId !== undefined && !account.open.has(order.orderId)) this.algo?.childEnded(account, order, time)
  }

  private finish(account: Account, order: Order, status: 'CANCELED' | 'EXPIRED', time: number, expireReason = 0): void {
    order.status = status
    order.expireReason = expireReason
    order.updateTime = time
    account.open.delete(order.orderId)
    this.changed = true
    this.emitOrder(account, order, status, time)
    if (order.algoId !== undefined) this.algo?.childEnded(account, order, time)
  }

  /** Funding at a funding time: the position pays qty × mark × rate when its side is the paying one (a long pays a positive rate). */
  private settleFunding(account: Account, symbol: MarketSymbol, time: number): void {
    const name = symbol.info.symbol
    const position = account.positions.get(name)!
    const event = fundingEvent(symbol, time)
    const mark = event.markPrice ?? markPrice(symbol, time)?.mark ?? 0
    const payment = round8(-position.amount * mark * event.rate)
    account.balances.set('USDT', round8((account.balances.get('USDT') ?? 0) + payment))
    const isolated = configOf(account, name).marginType === 'isolated'
    if (isolated) account.positions.set(name, { ...position, isolatedWallet: round8(position.isolatedWallet + payment) })
    this.income(account, name, 'FUNDING_FEE', payment, time, '')
    account.updateTime = time
    this.changed = true
    // A cross FUNDING_FEE update carries only the balance; an isolated one also its position.
    this.emitAccount(account, 'FUNDING_FEE', payment, isolated ? name : undefined, time)
  }

  /**
   * Liquidates an isolated position whose path touched its liquidation price: a taker fill at that
   * price closes it (`c` autoclose-…, execution CALCULATED), and what is left of its margin goes
   * to the insurance fund (INSURANCE_CLEAR), so the whole isolated margin is lost, as on Binance.
   */
  private liquidate(account: Account, symbol: MarketSymbol, price: number, time: number): void {
    const position = account.positions.get(symbol.info.symbol)!
    this.exchangeClose(account, symbol, Math.abs(position.amount), price, time, 'liquidation', false)
  }

  /**
   * The control behind `accounts.liquidate` (tests): the exchange closes `qty` (default: all) of the
   * account's position on `symbol` now, at `price` (default: the last price), as a liquidation
   * (`autoclose-<time>`, execution CALCULATED, the taker fee; an isolated position's remaining margin
   * goes to the insurance fund) or an auto-deleverage (`adl_autoclose`, execution TRADE, no fee).
   */
  forceClose(account: Account, name: string, kind: 'liquidation' | 'adl', qty?: number, price?: number): Order {
    this.settle(account)
    const symbol = this.market.get(name)
    if (!symbol) throw new Error(`no symbol ${name}`)
    const amount = positionOf(account, name).amount
    if (amount === 0) throw new Error(`the account holds no ${name} position`)
    const size = qty === undefined ? Math.abs(amount) : roundQty(qty)
    if (!(size > 0) || size > Math.abs(amount)) throw new Error(`qty must be above 0 and at most the position's ${Math.abs(amount)}`)
    const now = this.now()
    return this.exchangeClose(account, symbol, size, price ?? this.lastPrice(symbol, now), now, kind, true)
  }

  /**
   * An order the exchange places itself to close (part of) a position, as Binance's user stream shows it:
   * NEW, then its fill. A liquidation of an isolated position also clears the rest of its margin.
   */
  private exchangeClose(account: Account, symbol: MarketSymbol, qty: number, price: number, time: number, kind: 'liquidation' | 'adl', charged: boolean): Order {
    const name = symbol.info.symbol
    const position = account.positions.get(name)!
    const side: Side = position.amount > 0 ? 'SELL' : 'BUY'
    const tick = symbol.info.tickSize
    const fillPrice = Math.round(price / tick) * tick
    const order: Order = {
      orderId: this.ids.order++,
      clientOrderId: kind === 'adl' ? 'adl_autoclose' : `autoclose-${time}`,
      symbol: name,
      side,
      type: 'LIMIT',
      timeInForce: 'IOC',
      origQty: qty,
      price: fillPrice,
      reduceOnly: true,
      status: 'NEW',
      executedQty: 0,
      cumQuote: 0,
      time,
      updateTime: time,
      expireReason: 0,
    }
    account.orders.set(order.orderId, order)
    this.emitOrder(account, order, 'NEW', time)
    const isolated = configOf(account, name).marginType === 'isolated'
    const whole = qty >= Math.abs(position.amount)
    const walletBefore = position.isolatedWallet
    const before = position.amount
    const realized = applyFill(account, name, side, qty, fillPrice, time)
    const commission = charged && kind === 'liquidation' ? round8(qty * fillPrice * TAKER_RATE) : 0
    // A liquidated isolated position loses its whole margin: what the fill left of it goes to the insurance fund.
    const remainder = kind === 'liquidation' && isolated && whole ? round8(walletBefore + realized - commission) : 0
    account.balances.set('USDT', round8((account.balances.get('USDT') ?? 0) - commission - remainder))
    const trade: Trade = { id: this.ids.trade++, orderId: order.orderId, symbol: name, side, price: fillPrice, qty, quoteQty: qty * fillPrice, commission, realizedPnl: realized, maker: false, time }
    account.trades.push(trade)
    this.income(account, name, 'REALIZED_PNL', realized, time, String(trade.id))
    if (commission !== 0) this.income(account, name, 'COMMISSION', -commission, time, String(trade.id))
    if (remainder !== 0) this.income(account, name, 'INSURANCE_CLEAR', -remainder, time, '')
    order.executedQty = qty
    order.cumQuote = qty * fillPrice
    order.status = 'FILLED'
    order.updateTime = time
    account.updateTime = time
    this.changed = true
    this.emitOrder(account, order, kind === 'liquidation' ? 'CALCULATED' : 'TRADE', time, trade)
    this.emitAccount(account, 'ORDER', 0, name, time)
    this.algo?.positionChanged(account, name, before, positionOf(account, name).amount, time)
    return { ...order }
  }

  private income(account: Account, symbol: string, incomeType: IncomeType, income: number, time: number, tradeId: string): void {
    account.income.push({ tranId: this.ids.tran++, symbol, incomeType, income, asset: 'USDT', info: incomeType, time, tradeId })
  }

  private emitOrder(account: Account, order: Order, execution: ExecutionType, time: number, trade?: Trade): void {
    if (!this.streams.listening(account.apiKey)) return
    let bids = 0
    let asks = 0
    for (const open of account.open.values()) {
      if (open.symbol !== order.symbol) continue
      const notional = (open.origQty - open.executedQty) * open.price
      if (open.side === 'BUY') bids += notional
      else asks += notional
    }
    this.streams.emit(account.apiKey, orderTradeUpdate(this.market.get(order.symbol)!.info, order, execution, time, { bids, asks }, trade))
  }

  private emitAccount(account: Account, reason: AccountUpdateReason, change: number, symbol?: string, time = this.now()): void {
    if (!this.streams.listening(account.apiKey)) return
    const position = symbol === undefined ? undefined : { symbol: this.market.get(symbol)!.info, value: positionOf(account, symbol), mark: this.mark(symbol, time) }
    this.streams.emit(account.apiKey, accountUpdate(account, reason, time, change, position))
  }
}

function hasPosition(account: Account): boolean {
  for (const position of account.positions.values()) if (position.amount !== 0) return true
  return false
}

/** An id as Binance generates when none is sent: 22 letters and digits (here derived from the order id, so runs repeat). */
function generatedClientId(seed: number): string {
  return crypto.createHash('sha256').update(String(seed)).digest('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 22)
}
