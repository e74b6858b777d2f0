import { AppError, refusal } from '../../http/errors.js'
import type { CompiledModule, ModuleDescription, ModuleLanguage, ResolvedBatch, ResolvedParams, StrategySandbox } from './contract.js'
import { SANDBOX_LIMITS } from './limits.js'
import { SandboxPool } from './sandbox-pool.js'
import { StrategyError } from './strategy-error.js'
import { overValidateBudget, type ValidateBudget } from './validate-budget.js'

/**
 * Params resolved per batch of resolveParamsMany, each batch within one call's bound (5 s): measured on the
 * example sma-cross module, one resolve per request cost ~10 ms (a 10,000-configuration sweep's POST took
 * 96 s), one instance for 500 far less.
 */
const RESOLVE_BATCH = 500
/** The watchdog's margin over a budgeted batch's deadline: the thread's own stop at the deadline answers first. */
const BUDGET_GRACE_MS = 1_000
/** An upload's inspection includes a backtest over the smoke bars: a longer bound than one call. */
const INSPECT_MS = 5_000

/**
 * The sandbox as the API uses it: uploads inspected and params resolved in sandbox threads, never in
 * the main thread, `threads` of them (SANDBOX_THREADS) shared fairly between users (sandbox-pool.ts).
 */
export function createStrategySandbox(threads: number): StrategySandbox {
  const pool = new SandboxPool(threads)

  /**
   * Params resolved on one instance of the module, each refusal as the 400 it is. With a budget, the
   * thread stops at what is left of it and the watchdog a second later (a native loop ignores the
   * interrupt), and the budget is charged the thread's own time.
   */
  const resolveBatch = async (userId: number, compiled: CompiledModule, description: ModuleDescription, paramsList: unknown[], budget: ValidateBudget | undefined): Promise<(ResolvedParams | AppError)[]> => {
    const left = budget?.leftMs()
    if (left !== undefined && left <= 0) throw overValidateBudget()
    const limitMs = left === undefined ? SANDBOX_LIMITS.hardCallMs : Math.min(SANDBOX_LIMITS.hardCallMs, left + BUDGET_GRACE_MS)
    let batch: ResolvedBatch
    try {
      batch = await pool.call<ResolvedBatch>(userId, { type: 'resolve', code: compiled.code, ...(compiled.file === undefined ? {} : { file: compiled.file }), description, paramsList, ...(left === undefined ? {} : { budgetMs: left }) }, limitMs)
    } catch (error) {
      if (budget && error instanceof StrategyError && error.code === 'STRATEGY_TIMEOUT') throw overValidateBudget()
      throw asRefusal(error, 'params')
    }
    budget?.spend(batch.spentMs)
    return batch.answers.map((one) => ('refused' in one ? refusal(one.refused) : one))
  }

  return {
    async inspect(userId: number, source: string, language: ModuleLanguage, file?: string) {
      try {
        return await pool.call<{ compiled: CompiledModule; description: ModuleDescription }>(userId, { type: 'inspect', source, language, ...(file === undefined ? {} : { file }) }, INSPECT_MS)
      } catch (error) {
        throw asRefusal(error, 'source')
      }
    },
    async resolveParams(userId: number, compiled: CompiledModule, description: ModuleDescription, params: unknown, budget?: ValidateBudget) {
      const [one] = await resolveBatch(userId, compiled, description, [params], budget)
      if (one instanceof AppError) throw one
      return one!
    },
    async resolveParamsMany(userId: number, compiled: CompiledModule, description: ModuleDescription, paramsList: unknown[], budget?: ValidateBudget) {
      const results: (ResolvedParams | AppError)[] = []
      // In batches, each a call of its own: another user's call waits one batch at most, not the whole list.
      for (let first = 0; first < paramsList.length; first += RESOLVE_BATCH) results.push(...(await resolveBatch(userId, compiled, description, paramsList.slice(first, first + RESOLVE_BATCH), budget)))
      return results
    },
    close: () => pool.close(),
  }
}

/** A module's failure while the API asked it something is the request's 400, naming the field. */
function asRefusal(error: unknown, field: string): unknown {
  if (error instanceof StrategyError) return new AppError('INVALID_PARAMETER', `the module failed: ${error.message}`, { field })
  return error
}
