import crypto from 'node:crypto'
import type { SecretBox } from '../auth/secret-box.js'
import type { Db } from '../db/connect.js'
import { retryingTransaction } from '../db/retry.js'
import { recordEvent } from '../events/outbox.js'
import { isPositiveDecimal } from '../http/common-schemas.js'
import { money } from '../http/decimals.js'
import { accepted, AppError, invalidParameter, notFound } from '../http/errors.js'
import type { UpstreamClient } from '../market/upstream-client.js'
import { findStrategy, type StrategyRow } from '../strategies/queries.js'
import type { SymbolCheck } from '../strategies/tradable-symbols.js'
import { assertMinimumCapital } from '../strategies/service.js'
import { assertLeverageWithinTiers } from './leverage-limit.js'
import { resolveParams, templateById } from '../templates/validate.js'
import type { SingleSymbolTemplate, Template } from '../templates/types.js'
import { PaperBroker } from './brokers/paper-broker.js'
import { carryProtection, PAPER_FEES, paperProtection, paperSetup } from './brokers/paper-setup.js'
import { isCustomTemplateId } from '../custom-templates/ids.js'
import { type CustomTemplateVersion, deployedCustomStrategies, findTemplate } from '../custom-templates/queries.js'
import { SANDBOX_LIMITS } from '../custom-templates/sandbox/limits.js'
import { detachedTemplate } from '../custom-templates/sandbox/run-sandbox.js'
import type { TemplateCatalog } from '../custom-templates/template-catalog.js'
import { availableUsdt, verifiedKey } from './exchange-balance.js'
import {
  activeRun,
  cancelOpenOrders,
  committedCapital,
  endRun,
  insertOrder,
  insertRun,
  latestRun,
  nextIntent,
  paperBalance,
  type RunRow,
  liveRunOnSymbols,
  saveRunState,
} from './queries.js'
import { closeLivePosition } from './exchange/close-live-position.js'
import { clientOrderId, recordOutcome, type RunState } from './record-outcome.js'
import { publishStatus } from './stream/status-messages.js'
import type { StrategyFeed } from './stream/strategy-feed.js'
import { intervalMs } from './timeframes.js'
import { runTemplate } from './run-template.js'
import { carryMultiState, closeMultiPaperRun, multiPaperSetup } from './multi-run.js'

export interface DeployContext {
  db: Db
  userId: number
  now: Date
  secrets: SecretBox
  upstream: UpstreamClient
  /** Rules for the symbol (stepSize, filters) as the engine needs them. */
  rules: (symbol: string) => Promise<import('../engine/types.js').SymbolRules>
  /** Told after commit that a run started or ended, so this process's runners react at once. */
  onRunsChanged?: () => void
  /** This process's stream fan-out: a pause answers only once its messages reached the local clients. */
  feed?: Pick<StrategyFeed, 'waitFor'>
  /** Built-in and custom templates: a custom strategy's params are resolved in its module's sandbox at deploy. */
  templates: TemplateCatalog
  /** Refuses symbols the exchange does not list as trading (the gateway's cached exchange info). */
  tradable: SymbolCheck
}

/** How long a pause waits for its own stream messages to come back through NOTIFY (measured: a few ms). */
const PAUSE_STREAM_WAIT_MS = 2_000

export interface DeployBody {
  capital?: string
  leverage?: number
  dry_run?: boolean
  exchange_key_id?: string
}

const STRATEGY_ID = /^strat_[0-9a-f]{6,8}$/

/** The caller's strategy, or 404 (another user's strategy is not found, as everywhere). */
export async function ownStrategy(db: Db, userId: number, id: string, forUpdate: boolean): Promise<StrategyRow> {
  const row = STRATEGY_ID.test(id) ? await findStrategy(db, userId, id, forUpdate) : undefined
  if (!row) throw notFound(`strategy ${id}`)
  return row
}

/**
 * POST /v1/strategies/{id}/deploy (spec state table): draft or paused → deployed, with this run's
 * capital, leverage and mode. Checks in the spec's order of blame: 404, 409 state, 400 values, 409
 * account, 402 funds. A resume from paused runs the params as they are now and carries the previous
 * run's paper ledger (position and cash), so stats stay cumulative.
 */
export async function deployStrategy(context: DeployContext, id: string, body: DeployBody): Promise<void> {
  const { db, userId, now } = context
  const peek = await ownStrategy(db, userId, id, false)
  assertDeployable(peek)
  const dryRun = body.dry_run ?? false
  await context.tradable(peek.symbols, 'refuse')
  // Network reads happen before the transaction, so no row stays locked while the exchange answers.
  let exchangeKeyId: string | null = null
  let exchangeAvailable = Number.NaN
  if (!dryRun) {
    exchangeKeyId = await verifiedKey(db, userId, body.exchange_key_id)
    exchangeAvailable = await availableUsdt(db, context.secrets, context.upstream, userId, exchangeKeyId, now.getTime())
  }
  const previousRun = await latestRun(db, peek.id)
  const rules = previousRun?.state ? await Promise.all(previousRun.symbols.map((symbol) => context.rules(symbol))) : undefined
  const symbolRules = await Promise.all(peek.symbols.map((symbol) => context.rules(symbol)))
  const custom = isCustomTemplateId(peek.template_id) ? await customRunnable(context, peek) : undefined

  // Lock order (docs/decisions/live.md): the strategy, then its runs.
  await retryingTransaction(db, async (trx) => {
    const row = await ownStrategy(trx, userId, id, true)
    assertDeployable(row)
    if (custom) {
      // Locked so a delete of the template waits for this deploy (and then finds the strategy deployed).
      if (!(await findTemplate(trx, userId, row.template_id, true))) throw invalidParameter('template_id', `template ${row.template_id} was deleted`)
      if (row.updated_at.getTime() !== peek.updated_at.getTime()) throw new AppError('INVALID_STATE', `strategy ${id} changed while it was being deployed; deploy it again`)
    }
    const { template, params } = custom ?? runnable(row)
    const capitalText = body.capital ?? row.capital
    if (!isPositiveDecimal(capitalText)) throw invalidParameter('capital', 'capital must be a decimal string greater than 0')
    const capital = Number(capitalText)
    assertMinimumCapital(row.template_id, capitalText, template.minCapital)
    const leverage = body.leverage ?? row.leverage
    if (!(Number.isInteger(leverage) && leverage >= 1 && leverage <= 20)) throw invalidParameter('leverage', 'leverage must be an integer from 1 to 20')
    const symbol = row.symbols[0]!
    if (row.symbols.join() !== peek.symbols.join()) throw new AppError('INVALID_STATE', `strategy ${id} changed while it was being deployed; deploy it again`)
    // A many-symbol run may put all its capital on any one of its symbols: each symbol's tiers must allow it.
    row.symbols.forEach((s, k) => assertLeverageWithinTiers(s, symbolRules[k]!, capital, leverage))
    // Dry runs never clash: each trades its own paper ledger, so any number of them may trade one symbol (DESIGN §6).
    const clash = dryRun ? undefined : await liveRunOnSymbols(trx, userId, row.symbols, exchangeKeyId!, row.id)
    if (clash) throw new AppError('INVALID_STATE', `strategy ${clash.strategyId} already trades ${clash.symbol} on this account; positions would net (one-way mode)`)
    const committed = await committedCapital(trx, userId, dryRun, exchangeKeyId, row.id)
    const available = (dryRun ? await paperBalance(trx, userId) : exchangeAvailable) - committed
    if (available < capital) {
      throw new AppError('INSUFFICIENT_FUNDS', `capital ${capitalText} exceeds the ${dryRun ? 'paper wallet' : 'exchange account'}'s available ${money(available)} USDT (after other deployed runs)`)
    }
    const previous = await latestRun(trx, row.id)
    await insertRun(trx, {
      strategy_id: row.id,
      run: (previous?.run ?? 0) + 1,
      user_id: userId,
      template_id: row.template_id,
      template_version: custom?.version.version ?? null,
      seed: custom ? crypto.randomInt(2 ** 31) : null,
      params,
      symbol,
      symbols: row.symbols,
      timeframe: row.timeframe,
      capital: capitalText,
      leverage,
      dry_run: dryRun,
      exchange_key_id: exchangeKeyId,
      started_at: now,
      exits: row.exits,
    })
    // A live resume on the same key carries the run's ledger too: the exchange still holds its position,
    // and reconciliation requires our fills to explain it.
    const sameSymbols = previous !== undefined && previous.symbols.join() === row.symbols.join()
    if (previous?.state && rules && sameSymbols && previous.dry_run === dryRun && previous.exchange_key_id === exchangeKeyId) {
      const carried = template.multiSymbol
        ? carryMultiState(previous, multiPaperSetup(previous, template, rules, PAPER_FEES), capital, row.exits)
        : carryState(previous, { template, params, capital, leverage, rules: rules[0]!, exits: row.exits })
      await saveRunState(trx, row.id, (previous.run ?? 0) + 1, null, carried as unknown as Record<string, unknown>)
    }
    // A new run starts with a clean slate: the last error was kept through the edit back to draft (docs/decisions/live.md, "What a trader sees of a run").
    await trx
      .updateTable('strategies')
      .set({ status: 'deployed', deployed_at: now, updated_at: now, last_error_code: null, last_error_message: null, last_error_at: null })
      .where('id', '=', row.id)
      .execute()
    await recordEvent(trx, {
      userId,
      type: 'strategy.deployed',
      data: { strategy_id: row.id, dry_run: dryRun, capital: capitalText, leverage, deployed_at: now.toISOString() },
      at: now,
    })
    await publishStatus(trx, row.id, now)
  })
  context.onRunsChanged?.()
}

/**
 * POST /v1/strategies/{id}/pause: deployed → paused. With close_positions the paper broker closes the
 * position (a reduce-only market order at the last close the runner saw) in the same transaction that
 * ends the run; the runner, wherever it lives, then finds its run ended and stops.
 */
export async function pauseStrategy(context: DeployContext, id: string, closePositions: boolean): Promise<void> {
  const { db, userId, now } = context
  const peek = await ownStrategy(db, userId, id, false)
  if (peek.status !== 'deployed') throw new AppError('INVALID_STATE', `strategy ${id} is ${peek.status}; only a deployed strategy can be paused`)
  const rules = closePositions ? await Promise.all(peek.symbols.map((symbol) => context.rules(symbol))) : undefined
  // A deployed strategy cannot be edited, so its run pinned the strategy's template version.
  const template = closePositions ? await runTemplate(db, peek) : undefined
  // The stream's position_closed messages must reach clients before this answer (issue 11): the status
  // message published last in the transaction carries a token, and the answer waits until this
  // process's feed has handed it (and so everything before it) to its clients.
  const token = crypto.randomUUID()
  const wait = context.feed?.waitFor(token, PAUSE_STREAM_WAIT_MS)
  let liveClose: LiveClose | undefined
  try {
    liveClose = await pauseInTransaction(context, id, closePositions, rules, template, token)
  } catch (error) {
    wait?.cancel()
    throw error
  }
  await wait?.seen
  context.onRunsChanged?.()
  if (liveClose && rules) await closeLivePosition({ db, secrets: context.secrets, upstream: context.upstream, rules, now }, liveClose.run, liveClose.closeIds)
}

/** A paused live run whose positions are closed on the exchange after the pause commits: its close intents by symbol. */
interface LiveClose {
  run: RunRow
  closeIds: Record<string, string>
}

async function pauseInTransaction(
  context: DeployContext,
  id: string,
  closePositions: boolean,
  rules: import('../engine/types.js').SymbolRules[] | undefined,
  template: Template | undefined,
  token: string,
): Promise<LiveClose | undefined> {
  const { db, userId, now } = context
  let liveClose: LiveClose | undefined
  // Lock order (docs/decisions/live.md): the strategy, then its run; the runner's batch commit takes them in the same order.
  await retryingTransaction(db, async (trx) => {
    liveClose = undefined
    const row = await ownStrategy(trx, userId, id, true)
    if (row.status !== 'deployed') throw new AppError('INVALID_STATE', `strategy ${id} is ${row.status}; only a deployed strategy can be paused`)
    const run = await activeRun(trx, row.id, true)
    if (run && !run.dry_run) {
      // A live run's orders waiting for an answer may have executed: they stay 'new' (never cancelled
      // unseen); the close looks them up after this commit, with the run ended so no runner acts. One
      // reduce-only close intent per symbol of the run (sized from the exchange's position; a symbol found
      // flat drops its unsent intent): every symbol the run trades ends flat, whatever the ledger thought.
      if (closePositions && run.state) {
        const first = await nextIntent(trx, row.id, run.run)
        const closeIds: Record<string, string> = {}
        for (const [k, symbol] of run.symbols.entries()) {
          const closeId = clientOrderId(row.id, run.run, first + k)
          await insertOrder(trx, { client_order_id: closeId, strategy_id: row.id, run: run.run, intent: first + k, symbol, target: '0', reduce_only: true, status: 'new', created_at: now })
          closeIds[symbol] = closeId
        }
        liveClose = { run, closeIds }
      }
      await endRun(trx, row.id, run.run, now)
    } else if (run) {
      await cancelOpenOrders(trx, row.id, run.run)
      const state = run.state as unknown as RunState | null
      if (closePositions && run.state && rules && template?.multiSymbol) {
        await closeMultiPaperRun(trx, run, multiPaperSetup(run, template, rules, PAPER_FEES), now)
      } else if (closePositions && state && rules && template && !template.multiSymbol) {
        const broker = new PaperBroker(paperSetup(run, template, rules[0]!), state.broker)
        const price = broker.lastClose
        const outcome = broker.closeAll(price, now.getTime())
        const totals = broker.totals(price)
        await recordOutcome(trx, { run, now, pendingOrder: null, totals, rules: rules[0]! }, outcome, true)
        await saveRunState(trx, row.id, run.run, null, { broker: broker.snapshot(), pendingOrder: null })
      }
      await endRun(trx, row.id, run.run, now)
    }
    await trx.updateTable('strategies').set({ status: 'paused', updated_at: now }).where('id', '=', row.id).execute()
    await recordEvent(trx, { userId, type: 'strategy.paused', data: { strategy_id: row.id, close_positions: closePositions }, at: now })
    await publishStatus(trx, row.id, now, token)
  })
  return liveClose
}

function assertDeployable(row: StrategyRow): void {
  if (row.status !== 'draft' && row.status !== 'paused') {
    throw new AppError('INVALID_STATE', `strategy ${row.id} is ${row.status}; only a draft or paused strategy can be deployed`)
  }
}

/**
 * A custom strategy's template and params at deploy: its pinned version, params resolved in the module's
 * sandbox (a module that fails them is a 400 now, not an error later), within the user's limit of runs.
 */
async function customRunnable(context: DeployContext, row: StrategyRow): Promise<{ template: Template; params: Record<string, unknown>; version: CustomTemplateVersion }> {
  const { db, userId } = context
  if ((await deployedCustomStrategies(db, userId)) >= SANDBOX_LIMITS.runsPerUser) {
    throw new AppError('LIMIT_REACHED', `at most ${SANDBOX_LIMITS.runsPerUser} strategies of custom templates run at once; pause one first`)
  }
  const version = row.template_version ?? undefined
  const resolved = await context.templates.resolve(userId, row.template_id, row.params, { version, symbols: row.symbols })
  const found = resolved.custom!
  intervalMs(row.timeframe)
  return { template: detachedTemplate(found), params: resolved.params, version: found }
}

/** The template and params a run uses; params that no longer validate (a template changed) are a 400. */
function runnable(row: StrategyRow): { template: Template; params: Record<string, unknown> } {
  const template = accepted(templateById(row.template_id))
  const params = accepted(resolveParams(template, row.params))
  if (!template.multiSymbol && row.symbols.length !== 1) throw invalidParameter('symbols', 'a run of a one-symbol template trades exactly one symbol')
  intervalMs(row.timeframe)
  return { template, params }
}

/**
 * The state a resumed dry run starts from: the previous run's ledger (its position and cash, the cash
 * moved by any change of capital; protective levels as carryProtection leaves them under the new run's
 * exits) with no bar history, so the runner warms up afresh with today's params.
 */
function carryState(
  previous: RunRow,
  next: { template: SingleSymbolTemplate; params: Record<string, unknown>; capital: number; leverage: number; rules: import('../engine/types.js').SymbolRules; exits: RunRow['exits'] },
): RunState {
  const state = previous.state as unknown as RunState
  const old = new PaperBroker({ ...paperSetup(previous, next.template, next.rules), protect: paperProtection({ dry_run: previous.dry_run, exits: next.exits }) }, state.broker)
  carryProtection(old.ledger, previous, next)
  const broker = old.snapshot() as { ledger: { cash: number }; pending: number | null; lastOpenTime: number | null; lastClose: number | null }
  broker.ledger.cash += next.capital - Number(previous.capital)
  broker.pending = null
  broker.lastOpenTime = null
  return { broker, pendingOrder: null }
}
