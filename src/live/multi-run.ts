import type { Db } from '../db/connect.js'
import type { SymbolRules } from '../engine/types.js'
import type { MultiSymbolTemplate } from '../templates/types.js'
import { accepted } from '../http/errors.js'
import { resolveParams } from '../templates/validate.js'
import { MultiPaperBroker, type MultiPaperSetup } from './brokers/multi-paper-broker.js'
import { carryProtection, paperProtection } from './brokers/paper-setup.js'
import { nextIntent, nextTradeId, type RunRow, saveRunState } from './queries.js'
import { writeOutcomes } from './record-outcome.js'
import { type PendingOrders, stepRows } from './record-step.js'
import { intervalMs } from './timeframes.js'

/** What a many-symbol run keeps: its broker's snapshot and the orders waiting for each symbol's next bar. */
export interface MultiRunState {
  broker: Record<string, unknown>
  pendingOrders: PendingOrders
}

/** A run is many-symbol when its template is (a many-symbol template always holds at least two symbols). */
export function isMultiRun(run: Pick<RunRow, 'symbols'>): boolean {
  return run.symbols.length > 1
}

export function multiPaperSetup(run: RunRow, template: MultiSymbolTemplate, rules: readonly SymbolRules[], fees: MultiPaperSetup['fees']): MultiPaperSetup {
  return {
    template,
    params: accepted(resolveParams(template, run.params)),
    symbols: run.symbols,
    intervalMs: intervalMs(run.timeframe),
    rules,
    capital: Number(run.capital),
    leverage: run.leverage,
    fees,
    protect: paperProtection(run),
  }
}

/**
 * Pause with close_positions of a many-symbol dry run, inside the pause's transaction: every open position
 * is closed by a reduce-only market order at its symbol's last close the runner saw, one intent per symbol.
 */
export async function closeMultiPaperRun(trx: Db, run: RunRow, setup: MultiPaperSetup, now: Date): Promise<void> {
  const state = run.state as unknown as MultiRunState
  const broker = new MultiPaperBroker(setup, state.broker)
  const outcome = broker.closeAll(now.getTime())
  const counters = { intent: await nextIntent(trx, run.strategy_id, run.run), trade: await nextTradeId(trx, run.strategy_id) }
  const { rows } = stepRows({ run, now, totals: broker.totals(), rules: setup.rules }, outcome, {}, counters, true)
  await writeOutcomes(trx, rows)
  await saveRunState(trx, run.strategy_id, run.run, null, { ...state, broker: broker.snapshot(), pendingOrders: {} })
}

/**
 * The state a resumed many-symbol dry run starts from: the previous run's ledger (positions and cash, the
 * cash moved by any change of capital; protective levels as carryProtection leaves them under the new run's
 * `exits`) with no step history, so the runner warms up afresh.
 */
export function carryMultiState(previous: RunRow, setup: MultiPaperSetup, capital: number, exits: RunRow['exits']): MultiRunState {
  const state = previous.state as unknown as MultiRunState
  const old = new MultiPaperBroker({ ...setup, capital: Number(previous.capital), protect: paperProtection({ dry_run: previous.dry_run, exits }) }, state.broker)
  carryProtection(old.ledger, previous, { exits })
  const broker = old.snapshot() as { ledger: { cash: number }; pending: (number | null)[]; lastOpenTime: number | null }
  broker.ledger.cash += capital - Number(previous.capital)
  broker.pending = broker.pending.map(() => null)
  broker.lastOpenTime = null
  return { broker, pendingOrders: {} }
}
