import type { SecretBox } from '../../auth/secret-box.js'
import type { Db } from '../../db/connect.js'
import { retryingTransaction } from '../../db/retry.js'
import { lockStrategies } from '../../strategies/queries.js'
import type { SymbolRules } from '../../engine/types.js'
import { AppError } from '../../http/errors.js'
import type { UpstreamClient } from '../../market/upstream-client.js'
import type { MultiSymbolTemplate, SingleSymbolTemplate } from '../../templates/types.js'
import { runTemplate } from '../run-template.js'
import { ExchangeBroker } from '../brokers/exchange-broker.js'
import type { BrokerOutcome } from '../brokers/broker.js'
import { MultiPaperBroker, type StepOutcome } from '../brokers/multi-paper-broker.js'
import type { BinanceTradingClient } from '../../trading/binance/trading-client.js'
import { PaperBroker } from '../brokers/paper-broker.js'
import { SymbolExchange } from '../brokers/symbol-exchange.js'
import { PAPER_FEES, paperSetup } from '../brokers/paper-setup.js'
import { multiPaperSetup, type MultiRunState } from '../multi-run.js'
import { deleteUnsentIntent, nextIntent, nextTradeId, type RunRow, saveRunState } from '../queries.js'
import { recordOutcome, type RunState, writeOutcomes } from '../record-outcome.js'
import { stepRows } from '../record-step.js'
import type { LiveState } from './live-orders.js'
import { tradingClientOf } from './trading-client-of.js'
import { ProtectiveOrders } from '../protection/protective-orders.js'

export interface CloseContext {
  db: Db
  secrets: SecretBox
  upstream: UpstreamClient
  /** The run's symbols' rules, in its symbol order. */
  rules: SymbolRules[]
  now: Date
}

/** One symbol of a paused live run: its exchange side, the order whose outcome was unknown, and how a fill of it is booked. */
interface ClosingSymbol<O> {
  exchange: SymbolExchange<O>
  /** The symbol's protective orders on the exchange, cancelled before the close. */
  protection: ProtectiveOrders
  pending: { id: string; sentAt: number } | undefined
  /** Commits a booking (the ledger already moved) as the fill of order `settles`. */
  book(outcome: O, settles: string): Promise<void>
}

/**
 * Removes the close intent of a symbol found flat: it was committed before the exchange could be read (an
 * order must be on record before it is sent), but nothing was sent under it and nothing fills it. Booked
 * skipped, it listed a close of every flat symbol of a many-symbol run among the strategy's orders.
 */
function dropUnsent(db: Db, run: RunRow, closeId: string): Promise<void> {
  return bookInTransaction(db, run, (trx) => deleteUnsentIntent(trx, closeId))
}

/** Closes one symbol under `closeId`; answers what went wrong, or undefined when it is booked flat. */
type CloseSymbol = (closeId: string) => Promise<string | undefined>

/**
 * Closes a paused live run's positions on the exchange under the intents `closeIds` (by symbol; committed,
 * with the run already ended, so its runner sends nothing more). Per symbol: first settles the order whose
 * outcome was unknown, if the exchange shows it now, then sends the reduce-only close for exactly the
 * exchange's position and books its fill; a symbol flat on the exchange and in the ledger keeps no intent. The symbols close side by side; their bookings one at a time. A
 * close refused or unknown on any symbol answers 502 naming each, after every symbol was tried.
 */
export async function closeLivePosition(context: CloseContext, run: RunRow, closeIds: Record<string, string>): Promise<void> {
  if (!run.state) return
  const template = await runTemplate(context.db, run)
  const client = await tradingClientOf(context.db, context.secrets, context.upstream, run, () => context.now.getTime())
  const serial = new Serial()
  const drop = (closeId: string) => dropUnsent(context.db, run, closeId)
  const closers = template.multiSymbol
    ? multiClosing(context, run, template, client).map((symbol) => closer(symbol, serial, context.now.getTime(), drop))
    : [closer(oneClosing(context, run, template, client), serial, context.now.getTime(), drop)]
  const failures = await Promise.all(run.symbols.map((name, s) => (closeIds[name] === undefined ? undefined : closers[s]!(closeIds[name]))))
  const failed = failures.filter((f) => f !== undefined)
  if (failed.length > 0) throw new AppError('UPSTREAM_UNAVAILABLE', `the strategy is paused; ${failed.join('; ')}`)
}

/** Bookings one after another: each saves the run's whole ledger, so none may overtake another. */
class Serial {
  private tail: Promise<void> = Promise.resolve()

  run(step: () => Promise<void>): Promise<void> {
    const next = this.tail.then(step)
    this.tail = next.catch(() => undefined)
    return next
  }
}

function closer<O>(symbol: ClosingSymbol<O>, serial: Serial, time: number, drop: (closeId: string) => Promise<void>): CloseSymbol {
  return async (closeId) => {
    const { exchange, pending } = symbol
    // The protective orders first: none may fire beside the close, nor rest (a reduce-only trailing stop
    // would) once the position is gone. An unknown cancel does not hold the close back: a stop firing first
    // leaves the close nothing to reduce, and the next deploy's reconciliation cancels what still rests.
    await symbol.protection.cancelAll()
    if (pending) {
      const found = await exchange.lookUp(pending.id, pending.sentAt)
      if (found.kind === 'done') await serial.run(() => symbol.book(found.outcome, pending.id))
    }
    const closed = await exchange.close(closeId, time)
    if (closed.kind === 'flat') return void (await drop(closeId))
    if (closed.kind === 'done') return void (await serial.run(() => symbol.book(closed.outcome, closeId)))
    return closed.kind === 'unknown'
      ? `the close order ${closeId} of ${exchange.symbol} was sent but its outcome is unknown (${closed.reason}): check the position on the exchange`
      : `the exchange refused the close order of ${exchange.symbol} (${closed.code} ${closed.msg}): the position is still open`
  }
}

/** Only the booking is retried: the order was sent once, before it. The strategy before its run (docs/decisions/live.md, "Lock order"). */
function bookInTransaction(db: Db, run: RunRow, write: (trx: Db) => Promise<void>): Promise<void> {
  return retryingTransaction(db, async (trx) => {
    await lockStrategies(trx, [run.strategy_id])
    await write(trx)
  })
}

/** A paused run's protective orders on one symbol, to cancel (nothing is placed: the run has ended, so no lease is held). */
function closingProtection(context: CloseContext, run: RunRow, symbol: string, client: BinanceTradingClient, s = 0): ProtectiveOrders {
  const now = () => context.now.getTime()
  return new ProtectiveOrders(client, { db: context.db, owner: '', strategyId: run.strategy_id, run: run.run, symbol, rules: context.rules[s]!, now })
}

function oneClosing(context: CloseContext, run: RunRow, template: SingleSymbolTemplate, client: BinanceTradingClient): ClosingSymbol<BrokerOutcome> {
  const state = run.state as unknown as RunState & LiveState
  const setup = paperSetup(run, template, context.rules[0]!)
  const paper = new PaperBroker(setup, state.broker)
  const exchange = new ExchangeBroker(paper, client, setup)
  return {
    exchange,
    protection: closingProtection(context, run, run.symbol, client),
    pending: state.pendingOrder ? { id: state.pendingOrder, sentAt: state.pendingSentAt ?? Number.NaN } : undefined,
    book: (outcome, settles) =>
      bookInTransaction(context.db, run, async (trx) => {
        await recordOutcome(trx, { run, now: context.now, pendingOrder: settles, totals: paper.totals(paper.lastClose), rules: context.rules[0]! }, outcome)
        await saveRunState(trx, run.strategy_id, run.run, null, { ...state, broker: paper.snapshot(), pendingOrder: null })
      }),
  }
}

function multiClosing(context: CloseContext, run: RunRow, template: MultiSymbolTemplate, client: BinanceTradingClient): ClosingSymbol<StepOutcome>[] {
  const state = run.state as unknown as MultiRunState & { live?: Record<string, LiveState> }
  const setup = multiPaperSetup(run, template, context.rules, PAPER_FEES)
  const broker = new MultiPaperBroker(setup, state.broker)
  const pendingOrders = { ...state.pendingOrders }
  return run.symbols.map((symbol, s) => {
    const pending = pendingOrders[symbol]
    return {
      exchange: new SymbolExchange(broker.symbolLedger(s), client, symbol, context.rules[s]!, run.leverage),
      protection: closingProtection(context, run, symbol, client, s),
      pending: pending ? { id: pending, sentAt: state.live?.[symbol]?.pendingSentAt ?? Number.NaN } : undefined,
      book: (outcome, settles) =>
        bookInTransaction(context.db, run, async (trx) => {
          const counters = { intent: await nextIntent(trx, run.strategy_id, run.run), trade: await nextTradeId(trx, run.strategy_id) }
          const { rows } = stepRows({ run, now: context.now, totals: broker.totals(), rules: context.rules }, outcome, { [symbol]: settles }, counters)
          await writeOutcomes(trx, rows)
          delete pendingOrders[symbol]
          await saveRunState(trx, run.strategy_id, run.run, null, { ...state, broker: broker.snapshot(), pendingOrders })
        }),
    }
  })
}
