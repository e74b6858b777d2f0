import { isCustomTemplateId } from '../../custom-templates/ids.js'
import { findCustomVersion } from '../../custom-templates/queries.js'
import type { RunSandbox } from '../../custom-templates/sandbox/run-sandbox.js'
import { StrategyError } from '../../custom-templates/sandbox/strategy-error.js'
import type { SymbolRules } from '../../engine/types.js'
import type { Template } from '../../templates/types.js'
import { accepted } from '../../http/errors.js'
import { templateById } from '../../templates/validate.js'
import { failRun, RunFailure } from '../exchange/run-failure.js'
import type { RunRow } from '../queries.js'
import type { RunnerDeps } from './runner-deps.js'

/** What every runner (one symbol or many) shares of its steps: its module's sandbox and what a failed step does. */

/** The run's module in a sandbox thread of this node, at the version and with the seed the run pinned. */
export async function startRunSandbox(deps: Pick<RunnerDeps, 'db' | 'sandboxes'>, run: RunRow, intervalMs: number, rules: SymbolRules[]): Promise<RunSandbox> {
  const version = await findCustomVersion(deps.db, run.user_id, run.template_id, run.template_version ?? undefined, true)
  if (!version) throw new StrategyError('STRATEGY_ERROR', `template ${run.template_id} version ${run.template_version} no longer exists`)
  return deps.sandboxes.start({ version, seed: run.seed ?? 0, params: run.params, symbols: run.symbols, timeframe: run.timeframe, intervalMs, rules })
}

/**
 * The template a run steps: a built-in's, or its custom module's in a sandbox thread of this node. A module
 * that cannot start (its pinned version fails where it passed before) stops the runner and moves the run to
 * error: undefined then.
 */
export async function openRunTemplate(
  runner: { stop(): void; readonly run: RunRow },
  deps: Pick<RunnerDeps, 'db' | 'sandboxes' | 'owner' | 'now'>,
  intervalMs: number,
  rules: SymbolRules[],
): Promise<{ template: Template; sandbox?: RunSandbox } | undefined> {
  const { run } = runner
  if (!isCustomTemplateId(run.template_id)) return { template: accepted(templateById(run.template_id)) }
  try {
    const sandbox = await startRunSandbox(deps, run, intervalMs, rules)
    return { template: sandbox.template, sandbox }
  } catch (error) {
    if (!(error instanceof StrategyError)) throw error
    runner.stop()
    await failRun(deps.db, run, deps.owner, new RunFailure(error.code, error.message), new Date(deps.now()))
    return undefined
  }
}

/** Feeds a custom module (`call`); its failure is the run's: it ends the run in error. */
export async function feedModule(call: () => Promise<void>): Promise<void> {
  try {
    await call()
  } catch (error) {
    if (error instanceof StrategyError) throw new RunFailure(error.code, error.message)
    throw error
  }
}

/** A step that threw: a RunFailure stops the runner and ends the run in error; every failure is reported. */
export async function stepFailed(error: unknown, runner: { stop(): void; readonly run: RunRow }, deps: Pick<RunnerDeps, 'db' | 'owner' | 'now' | 'onError'>): Promise<void> {
  if (error instanceof RunFailure) {
    runner.stop()
    // A failure seen after the run ended elsewhere is not the run's: a pause with close_positions ends the
    // run, then closes its position, and this runner may hear that close on the user stream (a position
    // its ledger does not explain) before it learns the run ended; a takeover's new owner checks for itself.
    if (!(await failRun(deps.db, runner.run, deps.owner, error, new Date(deps.now())))) return
  }
  deps.onError(error, runner.run)
}

/**
 * A runner's steps, one after another (bars, user-stream events, the start): none runs beside another, a
 * stopped runner skips what is still queued, and a step that throws goes to `failed` without breaking the chain.
 */
export class StepChain {
  private tail: Promise<void> = Promise.resolve()

  constructor(
    private readonly stopped: () => boolean,
    private readonly failed: (error: unknown) => Promise<void>,
  ) {}

  enqueue(step: () => Promise<void>): Promise<void> {
    this.tail = this.tail.then(async () => {
      if (this.stopped()) return
      try {
        await step()
      } catch (error) {
        await this.failed(error)
      }
    })
    return this.tail
  }

  /** Resolves once every queued step is done (tests and shutdown). */
  idle(): Promise<void> {
    return this.tail
  }
}
