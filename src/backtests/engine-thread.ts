import { parentPort } from 'node:worker_threads'
import { BacktestCancelledError, type BacktestInput, runBacktest } from '../engine/index.js'
import { AppError } from '../http/errors.js'

/**
 * One engine thread: runs backtests one at a time off the event loop. Progress is posted at most every
 * 1 %; the parent cancels by setting the shared flag, which the engine sees at its next progress call.
 */
export type EngineRequest = { input: Omit<BacktestInput, 'onProgress'>; cancel: SharedArrayBuffer }
export type EngineMessage =
  | { type: 'progress'; fraction: number }
  | { type: 'done'; result: ReturnType<typeof runBacktest> }
  | { type: 'cancelled' }
  | { type: 'failed'; code: string; message: string; field?: string }

const port = parentPort
if (!port) throw new Error('engine-thread must run in a worker thread')

port.on('message', ({ input, cancel }: EngineRequest) => {
  const flag = new Int32Array(cancel)
  let reported = 0
  const post = (message: EngineMessage) => port.postMessage(message)
  try {
    const result = runBacktest({
      ...input,
      onProgress: (fraction) => {
        if (fraction - reported >= 0.01) {
          reported = fraction
          post({ type: 'progress', fraction })
        }
        return Atomics.load(flag, 0) === 0
      },
    })
    post({ type: 'done', result })
  } catch (error) {
    if (error instanceof BacktestCancelledError) post({ type: 'cancelled' })
    else if (error instanceof AppError) post({ type: 'failed', code: error.code, message: error.message, field: error.field })
    else post({ type: 'failed', code: 'ENGINE_ERROR', message: error instanceof Error ? error.message : String(error) })
  }
})
