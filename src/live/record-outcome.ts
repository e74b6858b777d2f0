import type { Db } from '../db/connect.js'
import { recordEvent } from '../events/outbox.js'
import type { BrokerOutcome, Fill } from './brokers/broker.js'
import { publishMessage, type StreamMessageType } from './stream/status-messages.js'
import { insertOrder, insertTrade, nextIntent, nextTradeId, type RunRow, settleOrder, updateStats } from './queries.js'

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
  /** The run's order waiting for this bar's open, if any. */
  pendingOrder: string | null
  totals: { realized: number; unrealized: number }
}

/**
 * Writes what one bar (or a close-all) did, inside the caller's transaction: the pending order's fill,
 * the closed trades, the strategy's stats, the events, and the next intent (committed before the next
 * bar can fill it), and the stream messages (NOTIFY, delivered at commit). Returns the client order id of that new intent, or null.
 */
export async function recordOutcome(trx: Db, context: OutcomeContext, outcome: BrokerOutcome, reduceOnlyClose = false): Promise<string | null> {
  const { run, now } = context
  const symbol = run.symbol
  const messages: [StreamMessageType, Record<string, unknown>][] = []

  let orderId = context.pendingOrder
  if (reduceOnlyClose && outcome.filledIntent && outcome.filledIntent.fills.length > 0) {
    const intent = await nextIntent(trx, run.strategy_id, run.run)
    orderId = clientOrderId(run.strategy_id, run.run, intent)
    await insertOrder(trx, { client_order_id: orderId, strategy_id: run.strategy_id, run: run.run, intent, symbol, target: '0', reduce_only: true, status: 'new', created_at: now })
  }
  if (outcome.filledIntent && orderId !== null) {
    const fill = merge(outcome.filledIntent.fills)
    await settleOrder(trx, orderId, fill
      ? { status: 'filled', side: fill.side, qty: String(fill.qty), price: String(fill.price), fee: String(fill.fee), filled_at: new Date(fill.time) }
      : { status: 'skipped', side: null, qty: null, price: null, fee: null, filled_at: null })
    if (fill) messages.push(['order', { client_order_id: orderId, symbol, side: fill.side, qty: String(fill.qty), price: String(fill.price), fee: String(fill.fee), status: 'filled', time: new Date(fill.time).toISOString() }])
  }

  let tradeId = outcome.trades.length > 0 ? await nextTradeId(trx, run.strategy_id) : 0
  for (const trade of outcome.trades) {
    await insertTrade(trx, {
      strategy_id: run.strategy_id,
      id: tradeId++,
      run: run.run,
      symbol,
      side: trade.side,
      entry_time: new Date(trade.entryTime),
      entry_price: String(trade.entryPrice),
      exit_time: new Date(trade.exitTime),
      exit_price: String(trade.exitPrice),
      qty: String(trade.qty),
      fee: String(trade.fee),
      funding: String(trade.funding),
      pnl: String(trade.pnl),
      exit_reason: trade.exitReason,
    })
    const data = {
      strategy_id: run.strategy_id,
      symbol,
      side: trade.side,
      qty: String(trade.qty),
      entry_price: String(trade.entryPrice),
      exit_price: String(trade.exitPrice),
      pnl: String(trade.pnl),
      exit_reason: trade.exitReason,
      time: new Date(trade.exitTime).toISOString(),
    }
    await recordEvent(trx, { userId: run.user_id, type: 'strategy.position_closed', data, at: now })
    messages.push(['position_closed', data])
  }
  const { qtyBefore, qtyAfter } = outcome
  if (qtyAfter !== 0 && (qtyBefore === 0 || Math.sign(qtyBefore) !== Math.sign(qtyAfter) || outcome.trades.length > 0)) {
    const data = {
      strategy_id: run.strategy_id,
      symbol,
      side: qtyAfter > 0 ? 'buy' : 'sell',
      qty: String(Math.abs(qtyAfter)),
      entry_price: String(outcome.entryPrice),
      time: new Date(outcome.filledIntent?.fills[0]?.time ?? now.getTime()).toISOString(),
    }
    await recordEvent(trx, { userId: run.user_id, type: 'strategy.position_opened', data, at: now })
    messages.push(['position_opened', data])
  }

  if (outcome.filledIntent || outcome.trades.length > 0 || outcome.fundingPaid !== 0 || qtyAfter !== 0) {
    await updateStats(trx, run.strategy_id, {
      openPositions: qtyAfter !== 0 ? 1 : 0,
      totalPnl: String(context.totals.realized + context.totals.unrealized),
      closedTrades: outcome.trades.length,
      winningTrades: outcome.trades.filter((t) => t.pnl > 0).length,
    })
  }

  let next: string | null = null
  if (!reduceOnlyClose && outcome.newTarget === outcome.newTarget) {
    const intent = await nextIntent(trx, run.strategy_id, run.run)
    next = clientOrderId(run.strategy_id, run.run, intent)
    await insertOrder(trx, { client_order_id: next, strategy_id: run.strategy_id, run: run.run, intent, symbol, target: String(outcome.newTarget), reduce_only: false, status: 'new', created_at: now })
  }
  for (const [type, data] of messages) await publishMessage(trx, { type, strategy_id: run.strategy_id, time: now.toISOString(), data })
  return next
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
