import { AppError, refusal } from '../../http/errors.js'
import type { CompiledModule, ModuleDescription, ModuleLanguage, ResolvedOrRefused, ResolvedParams, StrategySandbox } from './contract.js'
import { SANDBOX_LIMITS } from './limits.js'
import { SandboxWorker } from './sandbox-worker.js'
import { StrategyError } from './strategy-error.js'

/**
 * Params resolved per batch of resolveParamsMany, each batch within one call's bound (5 s): measured on the
 * example sma-cross module, one resolve per request cost ~10 ms (a 10,000-configuration sweep's POST took
 * 96 s), one instance for 500 far less.
 */
const RESOLVE_BATCH = 500
/** An upload's inspection includes a backtest over the smoke bars: a longer bound than one call. */
const INSPECT_MS = 5_000

/**
 * The sandbox as the API uses it: uploads inspected and params resolved in sandbox threads, never in
 * the main thread. Requests share a few threads (SANDBOX_API_THREADS), one request at a time each, with
 * a fresh QuickJS instance per request; a thread a module stopped (timeout, crash) is replaced.
 */
export function createStrategySandbox(threads = 1): StrategySandbox {
  const workers: (SandboxWorker | undefined)[] = new Array(threads).fill(undefined)
  const queues: Promise<unknown>[] = new Array(threads).fill(Promise.resolve())
  let turn = 0

  const run = <T>(request: Parameters<SandboxWorker['request']>[0], limitMs: number): Promise<T> => {
    const slot = turn++ % threads
    const next = queues[slot]!.catch(() => undefined).then(() => {
      let worker = workers[slot]
      if (!worker?.alive) worker = workers[slot] = new SandboxWorker()
      return worker.request<T>(request, limitMs)
    })
    queues[slot] = next
    return next
  }

  /** Params resolved on one instance of the module, each refusal as the 400 it is. */
  const resolveBatch = async (compiled: CompiledModule, description: ModuleDescription, paramsList: unknown[]): Promise<(ResolvedParams | AppError)[]> => {
    let answers: ResolvedOrRefused[]
    try {
      answers = await run<ResolvedOrRefused[]>({ type: 'resolve', code: compiled.code, description, paramsList }, SANDBOX_LIMITS.hardCallMs)
    } catch (error) {
      throw asRefusal(error, 'params')
    }
    return answers.map((one) => ('refused' in one ? refusal(one.refused) : one))
  }

  return {
    async inspect(source: string, language: ModuleLanguage) {
      try {
        return await run<{ compiled: CompiledModule; description: ModuleDescription }>({ type: 'inspect', source, language }, INSPECT_MS)
      } catch (error) {
        throw asRefusal(error, 'source')
      }
    },
    async resolveParams(compiled: CompiledModule, description: ModuleDescription, params: unknown) {
      const [one] = await resolveBatch(compiled, description, [params])
      if (one instanceof AppError) throw one
      return one!
    },
    async resolveParamsMany(compiled: CompiledModule, description: ModuleDescription, paramsList: unknown[]) {
      const results: (ResolvedParams | AppError)[] = []
      // In batches, each a request of its own: another user's request waits one batch, not the whole list.
      for (let first = 0; first < paramsList.length; first += RESOLVE_BATCH) results.push(...(await resolveBatch(compiled, description, paramsList.slice(first, first + RESOLVE_BATCH))))
      return results
    },
    async close() {
      await Promise.all(workers.map((worker) => worker?.close()))
    },
  }
}

/** A module's failure while the API asked it something is the request's 400, naming the field. */
function asRefusal(error: unknown, field: string): unknown {
  if (error instanceof StrategyError) return new AppError('INVALID_PARAMETER', `the module failed: ${error.message}`, { field })
  return error
}
