import type { Selectable } from 'kysely'
import type { Db } from '../db/connect.js'
import type { StrategyTradesTable } from '../db/schema.js'
import { type EventInsert, recordEvents } from '../events/outbox.js'
import { type DecimalRules, decimal, money, price, quantity } from '../http/decimals.js'
import type { BrokerOutcome, Fill } from './brokers/broker.js'
import { publishMessages, type StreamMessage } from './stream/status-messages.js'
import {
  type FilledOrderInsert,
  insertOrders,
  insertTrades,
  nextIntent,
  nextTradeId,
  type OrderInsert,
  type OrderSettle,
  type RunRow,
  settleOrders,
  type StatsChange,
  updateStatsOf,
} from './queries.js'

/** What a run keeps beside its broker's snapshot: the intent waiting for the next open. */
export interface RunState {
  broker: Record<string, unknown>
  pendingOrder: string | null
}

/** Deterministic client order id (DESIGN §6): pp-<strategy hex>-<run>-<intent>, at most 36 characters of Binance's charset. */
export function clientOrderId(strategyId: string, run: number, intent: number): string {
  return `${clientOrderIdPrefix(strategyId)}${run}-${intent}`
}

/** What every client order id of a strategy starts with, whatever the run: `pp-<strategy hex>-`. */
export function clientOrderIdPrefix(strategyId: string): string {
  return `pp-${strategyId.slice('strat_'.length)}-`
}

export interface OutcomeContext {
  run: RunRow
  now: Date
  /** The exchange's time of the close this outcome acts at (the bar's close time), stamped on the intents it states; undefined for a pause's close. */
  closeTime?: number | undefined
  /** The position the new intent comes to, sized at this close's price: the pending order's side and quantity (undefined: not sized). */
  sizedQty?: number | undefined
  /** The run's order waiting for this bar's open, if any. */
  pendingOrder: string | null
  totals: { realized: number; unrealized: number }
  /** The symbol's tick and step: every price and quantity is written at them (src/http/decimals.ts). */
  rules: DecimalRules
}

/** The run's next intent number and its strategy's next trade number (a runner holding the lease keeps them). */
export interface OutcomeCounters {
  intent: number
  trade: number
}

/** The rows one outcome writes, in the order they are written. */
export interface OutcomeRows {
  /** A reduce-only close intent (pause with close_positions), inserted before it is settled. */
  closeIntent: OrderInsert | undefined
  settle: OrderSettle | undefined
  /** A dry run's protective exits, each its own reduce-only order, written filled. */
  exitOrders: FilledOrderInsert[]
  trades: Selectable<StrategyTradesTable>[]
  events: EventInsert[]
  stats: StatsChange | undefined
  /** The next intent, committed before the next bar can fill it (or, live, before its order is sent). */
  order: OrderInsert | undefined
  messages: StreamMessage[]
  /** The new intent's client order id, or null. */
  next: string | null
  /** The counters after these rows. */
  counters: OutcomeCounters
}

/**
 * What one bar (or a close-all) did, as rows: the pending order's fill, the closed trades, the strategy's
 * stats, the events, the next intent and the stream messages. Pure: `writeOutcomes` writes them, alone or
 * with other runs' (the runner pool's group commit).
 */
export function outcomeRows(context: OutcomeContext, outcome: BrokerOutcome, counters: OutcomeCounters, reduceOnlyClose = false): OutcomeRows {
  const { run, now } = context
  const symbol = run.symbol
  const time = now.toISOString()
  const statedAt = context.closeTime === undefined || context.closeTime !== context.closeTime ? null : new Date(context.closeTime)
  let { intent, trade } = counters
  const rows: OutcomeRows = { closeIntent: undefined, settle: undefined, exitOrders: [], trades: [], events: [], stats: undefined, order: undefined, messages: [], next: null, counters }
  const message = (type: StreamMessage['type'], data: Record<string, unknown>) => rows.messages.push({ type, strategy_id: run.strategy_id, time, data })
  const px = (value: number) => price(value, context.rules)
  const qty = (value: number) => quantity(value, context.rules)

  let orderId = context.pendingOrder
  if (reduceOnlyClose && outcome.filledIntent && outcome.filledIntent.fills.length > 0) {
    orderId = clientOrderId(run.strategy_id, run.run, intent)
    rows.closeIntent = { client_order_id: orderId, strategy_id: run.strategy_id, run: run.run, intent: intent++, symbol, target: '0', reduce_only: true, status: 'new', created_at: now, stated_at: statedAt }
  }
  if (outcome.filledIntent && orderId !== null) {
    const fill = merge(outcome.filledIntent.fills)
    rows.settle = fill
      ? { client_order_id: orderId, status: 'filled', side: fill.side, qty: qty(fill.qty), price: px(fill.price), fee: money(fill.fee), filled_at: new Date(fill.time) }
      : { client_order_id: orderId, status: 'skipped', side: null, qty: null, price: null, fee: null, filled_at: null }
    if (fill) message('order', { client_order_id: orderId, symbol, side: fill.side, qty: qty(fill.qty), price: px(fill.price), fee: money(fill.fee), status: 'filled', time: new Date(fill.time).toISOString() })
  }
  // A protective exit is no order the strategy stated: the engine's market close of the whole position,
  // numbered as the run's next intent; a live run's carries the exchange's id (its protective order's clientAlgoId).
  for (const exit of outcome.protectiveExits) {
    const id = exit.clientOrderId ?? clientOrderId(run.strategy_id, run.run, intent)
    const filled = { side: exit.side, qty: qty(exit.qty), price: px(exit.price), fee: money(exit.fee), filled_at: new Date(exit.time) }
    rows.exitOrders.push({ client_order_id: id, strategy_id: run.strategy_id, run: run.run, intent: intent++, symbol, target: '0', reduce_only: true, status: 'filled', created_at: now, stated_at: filled.filled_at, ...filled, exit_reason: exit.reason })
    message('order', { client_order_id: id, symbol, side: exit.side, qty: filled.qty, price: filled.price, fee: filled.fee, status: 'filled', time: filled.filled_at.toISOString(), exit_reason: exit.reason })
  }

  for (const t of outcome.trades) {
    rows.trades.push({
      strategy_id: run.strategy_id,
      id: trade++,
      run: run.run,
      symbol,
      side: t.side,
      entry_time: new Date(t.entryTime),
      entry_price: px(t.entryPrice),
      exit_time: new Date(t.exitTime),
      exit_price: px(t.exitPrice),
      qty: qty(t.qty),
      fee: money(t.fee),
      funding: money(t.funding),
      pnl: money(t.pnl),
      exit_reason: t.exitReason,
    })
    const data = {
      strategy_id: run.strategy_id,
      symbol,
      side: t.side,
      qty: qty(t.qty),
      entry_price: px(t.entryPrice),
      exit_price: px(t.exitPrice),
      pnl: money(t.pnl),
      exit_reason: t.exitReason,
      time: new Date(t.exitTime).toISOString(),
    }
    rows.events.push({ userId: run.user_id, type: 'strategy.position_closed', data, at: now })
    message('position_closed', data)
  }
  const { qtyBefore, qtyAfter } = outcome
  if (qtyAfter !== 0 && (qtyBefore === 0 || Math.sign(qtyBefore) !== Math.sign(qtyAfter) || outcome.trades.length > 0)) {
    const data = {
      strategy_id: run.strategy_id,
      symbol,
      side: qtyAfter > 0 ? 'buy' : 'sell',
      qty: qty(Math.abs(qtyAfter)),
      entry_price: px(outcome.entryPrice),
      time: new Date(outcome.filledIntent?.fills[0]?.time ?? now.getTime()).toISOString(),
    }
    rows.events.push({ userId: run.user_id, type: 'strategy.position_opened', data, at: now })
    message('position_opened', data)
  }

  if (outcome.filledIntent || outcome.trades.length > 0 || outcome.fundingPaid !== 0 || qtyAfter !== 0) {
    rows.stats = {
      strategyId: run.strategy_id,
      openPositions: qtyAfter !== 0 ? 1 : 0,
      totalPnl: money(context.totals.realized + context.totals.unrealized),
      closedTrades: outcome.trades.length,
      winningTrades: outcome.trades.filter((t) => t.pnl > 0).length,
    }
  }

  if (!reduceOnlyClose && outcome.newTarget === outcome.newTarget) {
    rows.next = clientOrderId(run.strategy_id, run.run, intent)
    // As an exchange lists an order before it fills: its side and quantity, here sized at the close that stated it.
    const change = context.sizedQty === undefined ? 0 : context.sizedQty - qtyAfter
    const size = change === 0 || change !== change ? { side: null, qty: null } : { side: change > 0 ? ('buy' as const) : ('sell' as const), qty: qty(Math.abs(change)) }
    rows.order = { client_order_id: rows.next, strategy_id: run.strategy_id, run: run.run, intent: intent++, symbol, target: decimal(outcome.newTarget), reduce_only: false, status: 'new', created_at: now, stated_at: statedAt, ...size }
  }
  rows.counters = { intent, trade }
  return rows
}

/**
 * Writes the rows of many outcomes inside the caller's transaction, one statement per kind: close intents
 * and protective exits' orders, fills, trades, events (the outbox), stats, new intents, then the stream
 * messages (NOTIFY, delivered at commit, in this order). Each run appears at most once.
 */
export async function writeOutcomes(trx: Db, all: readonly OutcomeRows[]): Promise<void> {
  const pick = <T>(get: (rows: OutcomeRows) => T | undefined): T[] => all.flatMap((rows) => {
    const value = get(rows)
    return value === undefined ? [] : [value]
  })
  await insertOrders(trx, [...pick((r) => r.closeIntent), ...all.flatMap((r) => r.exitOrders)])
  await settleOrders(trx, pick((r) => r.settle))
  await insertTrades(trx, all.flatMap((r) => r.trades))
  await recordEvents(trx, all.flatMap((r) => r.events))
  await updateStatsOf(trx, pick((r) => r.stats))
  await insertOrders(trx, pick((r) => r.order))
  await publishMessages(trx, all.flatMap((r) => r.messages))
}

/**
 * Writes what one bar (or a close-all) did inside the caller's transaction (outcomeRows, then
 * writeOutcomes), reading the run's counters first. Returns the client order id of the new intent, or null.
 */
export async function recordOutcome(trx: Db, context: OutcomeContext, outcome: BrokerOutcome, reduceOnlyClose = false): Promise<string | null> {
  const counters = { intent: await nextIntent(trx, context.run.strategy_id, context.run.run), trade: await nextTradeId(trx, context.run.strategy_id) }
  const rows = outcomeRows(context, outcome, counters, reduceOnlyClose)
  await writeOutcomes(trx, [rows])
  return rows.next
}

/** The fills of one order as one: a reversal closes and opens at the same price on the same side. */
function merge(fills: readonly Fill[]): Fill | undefined {
  if (fills.length === 0) return undefined
  let qty = 0
  let notional = 0
  let fee = 0
  for (const f of fills) {
    qty += f.qty
    notional += f.qty * f.price
    fee += f.fee
  }
  const first = fills[0]!
  return { side: first.side, qty: Number(qty.toFixed(12)), price: fills.length === 1 ? first.price : notional / qty, fee, time: first.time }
}
