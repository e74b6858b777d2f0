import type { SecretBox } from '../../auth/secret-box.js'
import type { Db } from '../../db/connect.js'
import { retryingTransaction } from '../../db/retry.js'
import { lockStrategies } from '../../strategies/queries.js'
import type { SymbolRules } from '../../engine/types.js'
import { AppError } from '../../http/errors.js'
import type { UpstreamClient } from '../../market/upstream-client.js'
import { runTemplate } from '../run-template.js'
import type { BrokerOutcome } from '../brokers/broker.js'
import { ExchangeBroker, type Execution } from '../brokers/exchange-broker.js'
import { PaperBroker } from '../brokers/paper-broker.js'
import { paperSetup } from '../deploy.js'
import { type RunRow, saveRunState } from '../queries.js'
import { recordOutcome, type RunState } from '../record-outcome.js'
import { tradingClientOf } from './trading-client-of.js'

export interface CloseContext {
  db: Db
  secrets: SecretBox
  upstream: UpstreamClient
  rules: SymbolRules
  now: Date
}

/**
 * Closes a paused live run's position on the exchange under the intent `closeId` (committed, with the
 * run already ended, so its runner sends nothing more): first settles the run's order whose outcome
 * was unknown, if the exchange shows it now, then sends the reduce-only close and books its fill.
 */
export async function closeLivePosition(context: CloseContext, run: RunRow, closeId: string): Promise<void> {
  const state = run.state as unknown as (RunState & { pendingSentAt?: number }) | null
  if (!state) return
  const setup = paperSetup(run, await runTemplate(context.db, run), context.rules)
  const paper = new PaperBroker(setup, state.broker)
  const broker = new ExchangeBroker(paper, await tradingClientOf(context.db, context.secrets, context.upstream, run, () => context.now.getTime()), setup)
  const book = (outcome: BrokerOutcome, settles: string) =>
    // Only the booking is retried: the order was sent once, before it.
    retryingTransaction(context.db, async (trx) => {
      await lockStrategies(trx, [run.strategy_id]) // the strategy before its run (docs/decisions.md, "Lock order")
      await recordOutcome(trx, { run, now: context.now, pendingOrder: settles, totals: paper.totals(paper.lastClose), rules: context.rules }, outcome)
      await saveRunState(trx, run.strategy_id, run.run, null, { ...state, broker: paper.snapshot(), pendingOrder: null })
    })
  if (state.pendingOrder) {
    const found = await broker.lookUp(state.pendingOrder, state.pendingSentAt ?? Number.NaN)
    if (found.kind === 'done') await book(found.outcome, state.pendingOrder)
  }
  const closed: Execution = await broker.close(closeId, context.now.getTime())
  if (closed.kind === 'done') return book(closed.outcome, closeId)
  throw new AppError(
    'UPSTREAM_UNAVAILABLE',
    closed.kind === 'unknown'
      ? `the strategy is paused; the close order ${closeId} was sent but its outcome is unknown (${closed.reason}): check the position on the exchange`
      : `the strategy is paused but the exchange refused the close order (${closed.code} ${closed.msg}): the position is still open`,
  )
}
