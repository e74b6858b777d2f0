import { type DecimalRules, money } from '../http/decimals.js'
import type { StepOutcome } from './brokers/multi-paper-broker.js'
import type { RunRow } from './queries.js'
import { type OutcomeCounters, type OutcomeRows, outcomeRows } from './record-outcome.js'

/** A many-symbol run's orders waiting for their symbol's next bar, by symbol. */
export type PendingOrders = Record<string, string>

export interface StepRows {
  /** One entry per symbol that did something; the strategy's stats ride on the last. */
  rows: OutcomeRows[]
  pendingOrders: PendingOrders
  counters: OutcomeCounters
  /** Whether a new intent was written. */
  intents: boolean
}

/**
 * What one step of a many-symbol run (or a close of all its positions) did, as rows: each symbol's part is
 * a one-symbol outcome (outcomeRows, with the symbol's own pending order), numbered on from the run's
 * counters in symbol order; the strategy's stats are the account's (every open position, the run's total
 * PnL), written once. A symbol's target still waiting for its next bar when a new one is stated is
 * cancelled (it never reached a fill).
 */
export function stepRows(
  context: { run: RunRow; now: Date; closeTime?: number | undefined; sizedQtys?: Float64Array | undefined; totals: { realized: number; unrealized: number; open: number }; rules: readonly DecimalRules[] },
  step: StepOutcome,
  pending: PendingOrders,
  counters: OutcomeCounters,
  reduceOnlyClose = false,
): StepRows {
  const next: PendingOrders = { ...pending }
  const rows: OutcomeRows[] = []
  let closedTrades = 0
  let winningTrades = 0
  let touched = step.fundingPaid !== 0 || context.totals.open > 0
  let intents = false
  step.symbols.forEach((outcome, s) => {
    const symbol = outcome.symbol
    const before = next[symbol] ?? null
    const part = outcomeRows({ run: { ...context.run, symbol }, now: context.now, closeTime: context.closeTime, sizedQty: context.sizedQtys?.[s], pendingOrder: before, totals: context.totals, rules: context.rules[s]! }, outcome, counters, reduceOnlyClose)
    counters = part.counters
    if (outcome.replaced && before !== null) {
      part.settle = { client_order_id: before, status: 'cancelled', side: null, qty: null, price: null, fee: null, filled_at: null }
    }
    if (part.next !== null) {
      next[symbol] = part.next
      intents = true
    } else if (outcome.filledIntent) delete next[symbol]
    if (part.stats) touched = true
    part.stats = undefined
    closedTrades += outcome.trades.length
    winningTrades += outcome.trades.filter((t) => t.pnl > 0).length
    if (part.settle || part.closeIntent || part.order || part.exitOrders.length > 0 || part.trades.length > 0 || part.events.length > 0 || part.messages.length > 0) rows.push(part)
  })
  if (touched) {
    const last = rows[rows.length - 1] ?? emptyRows(counters)
    if (rows.length === 0) rows.push(last)
    last.stats = {
      strategyId: context.run.strategy_id,
      openPositions: context.totals.open,
      totalPnl: money(context.totals.realized + context.totals.unrealized),
      closedTrades,
      winningTrades,
    }
  }
  return { rows, pendingOrders: next, counters, intents }
}

function emptyRows(counters: OutcomeCounters): OutcomeRows {
  return { closeIntent: undefined, settle: undefined, exitOrders: [], trades: [], events: [], stats: undefined, order: undefined, messages: [], next: null, counters }
}
