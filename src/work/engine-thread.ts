import { parentPort } from 'node:worker_threads'
import { BacktestCancelledError, type BacktestInput, BacktestParamsError, MissingMarkBars, runBacktest } from '../engine/index.js'
import { type CustomTemplateSource, customTemplate } from '../custom-templates/sandbox/custom-template.js'
import { sandboxFailure, StrategyError } from '../custom-templates/sandbox/strategy-error.js'
import { StrategyInstance } from '../custom-templates/sandbox/strategy-instance.js'
import type { Template } from '../templates/types.js'

/**
 * One engine thread: runs backtests one at a time off the event loop. Progress is posted at most every
 * 1 %; the parent cancels by setting the shared flag, which the engine sees at its next progress call.
 */
export type EngineRequest = {
  input: Omit<BacktestInput, 'onProgress' | 'template'>
  custom?: CustomJob
  budgetMs?: number
  cancel: SharedArrayBuffer
  /** Answer a RunSummary instead of the whole result (a sweep's run: no trades cross the thread boundary). */
  summary?: boolean
}
/** What a sweep keeps of a run: its metrics, resolved params and daily equity curve. */
export interface RunSummary {
  metrics: ReturnType<typeof runBacktest>['metrics']
  params: Record<string, unknown>
  /** The daily equity curve's times and values (engine/daily-curve.ts). */
  times: Float64Array
  values: Float64Array
}
/** A job of a user's module: its code and seed; this thread is then its sandbox (EnginePool times it). */
export interface CustomJob {
  source: CustomTemplateSource
  code: string
  seed: number
}
export type EngineMessage =
  /** A user's module's job reached the thread: its budget runs from here, not from a fresh thread's start. */
  | { type: 'started' }
  | { type: 'progress'; fraction: number }
  | { type: 'done'; result: ReturnType<typeof runBacktest> }
  | { type: 'summary'; summary: RunSummary }
  | { type: 'cancelled' }
  /** retire: the pool ends this thread (a user's module failed in it: nothing it touched is trusted again). */
  | { type: 'failed'; code: string; message: string; field?: string; retire?: boolean }

const port = parentPort
if (!port) throw new Error('engine-thread must run in a worker thread')

port.on('message', async ({ input, custom, budgetMs, cancel, summary }: EngineRequest) => {
  const flag = new Int32Array(cancel)
  let reported = 0
  const post = (message: EngineMessage) => port.postMessage(message)
  let instance: StrategyInstance | undefined
  if (budgetMs !== undefined) post({ type: 'started' })
  try {
    let template: Template | undefined
    if (custom) {
      instance = await StrategyInstance.load(custom.code, custom.seed, { callMs: budgetMs, ...(custom.source.file === undefined ? {} : { file: custom.source.file }) })
      template = customTemplate(custom.source, instance)
    }
    const result = runBacktest({
      ...input,
      template,
      onProgress: (fraction) => {
        if (fraction - reported >= 0.01) {
          reported = fraction
          post({ type: 'progress', fraction })
        }
        return Atomics.load(flag, 0) === 0
      },
    })
    if (summary) {
      const times = Float64Array.from(result.equityCurve, ([time]) => time)
      const values = Float64Array.from(result.equityCurve, ([, equity]) => equity)
      port.postMessage({ type: 'summary', summary: { metrics: result.metrics, params: result.params, times, values } } satisfies EngineMessage, [times.buffer, values.buffer])
    } else post({ type: 'done', result })
  } catch (error) {
    if (error instanceof StrategyError) {
      post({ type: 'failed', code: error.code, message: error.message, retire: true })
      return
    }
    // Before the module's failures below: a run of a user's module lacking mark-price bars is the data's fault, not the module's.
    if (error instanceof MissingMarkBars) {
      post({ type: 'failed', code: 'NO_DATA', message: error.message })
      return
    }
    if (custom && !(error instanceof BacktestParamsError || error instanceof BacktestCancelledError)) {
      // A WebAssembly trap inside the module: its failure, STRATEGY_OOM only when memory ran out.
      const { code, message } = sandboxFailure(error)
      post({ type: 'failed', code, message, retire: true })
      return
    }
    if (error instanceof BacktestCancelledError) post({ type: 'cancelled' })
    else if (error instanceof BacktestParamsError) post({ type: 'failed', code: 'INVALID_PARAMETER', message: error.message, field: error.problem.field })
    else post({ type: 'failed', code: 'ENGINE_ERROR', message: error instanceof Error ? error.message : String(error) })
  } finally {
    instance?.dispose()
  }
})
