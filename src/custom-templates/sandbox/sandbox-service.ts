import { AppError } from '../../http/errors.js'
import type { CompiledModule, ModuleDescription, ModuleLanguage, StrategySandbox } from './contract.js'
import { SANDBOX_LIMITS } from './limits.js'
import { SandboxWorker } from './sandbox-worker.js'
import { StrategyError } from './strategy-error.js'

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

  return {
    async inspect(source: string, language: ModuleLanguage) {
      try {
        return await run<{ compiled: CompiledModule; description: ModuleDescription }>({ type: 'inspect', source, language }, INSPECT_MS)
      } catch (error) {
        throw asRefusal(error, 'source')
      }
    },
    async resolveParams(compiled: CompiledModule, description: ModuleDescription, params: unknown) {
      try {
        return await run<{ params: Record<string, unknown>; warmup: number }>({ type: 'resolve', code: compiled.code, description, params }, SANDBOX_LIMITS.hardCallMs)
      } catch (error) {
        throw asRefusal(error, 'params')
      }
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
