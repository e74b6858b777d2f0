import type { Worker } from 'node:worker_threads'
import type { BacktestResult } from '../engine/index.js'
import { startWorker } from '../worker-thread.js'
import type { CustomJob, EngineMessage, EngineRequest, RunSummary } from './engine-thread.js'

export class EngineFailure extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

export class EngineCancelled extends Error {}

interface Task {
  request: EngineRequest
  /** A user's module: the wall-clock budget after which its thread is terminated (STRATEGY_TIMEOUT). */
  budgetMs?: number
  onProgress: (fraction: number) => void
  /** The result, or the RunSummary when the request asked for one. */
  resolve: (result: never) => void
  reject: (error: Error) => void
}

/** A fixed set of engine threads (WORKERS), each running one backtest at a time; CPU work never blocks HTTP. */
export class EnginePool {
  private readonly idle: Worker[] = []
  private readonly waiting: Task[] = []
  private readonly all = new Set<Worker>()
  private closed = false

  constructor(private readonly size: number) {}

  /** Runs one backtest; `cancel` set to true stops it at the engine's next progress point (within ~65k bars). */
  run(
    input: EngineRequest['input'],
    onProgress: (fraction: number) => void,
    custom?: { job: CustomJob; budgetMs: number },
  ): { result: Promise<BacktestResult>; cancel: () => void } {
    return this.submit<BacktestResult>(input, onProgress, custom, false)
  }

  /** Runs one backtest and answers only its metrics, params and daily equity (a sweep's run). */
  summarize(input: EngineRequest['input'], custom?: { job: CustomJob; budgetMs: number }): { result: Promise<RunSummary>; cancel: () => void } {
    return this.submit<RunSummary>(input, () => undefined, custom, true)
  }

  private submit<R>(input: EngineRequest['input'], onProgress: (fraction: number) => void, custom: { job: CustomJob; budgetMs: number } | undefined, summary: boolean) {
    const cancel = new SharedArrayBuffer(4)
    const result = new Promise<R>((resolve, reject) => {
      const request: EngineRequest = { input, custom: custom?.job, budgetMs: custom?.budgetMs, cancel, ...(summary ? { summary } : {}) }
      this.waiting.push({ request, budgetMs: custom?.budgetMs, onProgress, resolve: resolve as (result: never) => void, reject })
      this.dispatch()
    })
    return { result, cancel: () => Atomics.store(new Int32Array(cancel), 0, 1) }
  }

  async close(): Promise<void> {
    this.closed = true
    for (const task of this.waiting.splice(0)) task.reject(new EngineCancelled('the engine pool closed'))
    await Promise.all([...this.all].map((worker) => worker.terminate()))
  }

  private dispatch(): void {
    while (this.waiting.length > 0 && !this.closed) {
      const worker = this.idle.pop() ?? (this.all.size < this.size ? this.spawn() : undefined)
      if (!worker) return
      this.execute(worker, this.waiting.shift()!)
    }
  }

  private spawn(): Worker {
    const worker = startWorker(new URL('./engine-thread.js', import.meta.url), undefined)
    this.all.add(worker)
    return worker
  }

  private execute(worker: Worker, task: Task): void {
    // The hard bound on a user's module: its whole job's strategy time, enforced by ending the thread. It runs
    // from the thread's 'started': a fresh thread's start took 2.7 s under tsx (tests), which is not the module's.
    let watchdog: NodeJS.Timeout | undefined
    const settle = (then: () => void) => {
      clearTimeout(watchdog)
      worker.off('message', onMessage)
      worker.off('error', onError)
      worker.off('exit', onExit)
      then()
    }
    const onMessage = (message: EngineMessage) => {
      if (message.type === 'started') {
        const budgetMs = task.budgetMs
        if (budgetMs !== undefined) watchdog = setTimeout(() => settle(() => this.drop(worker, task, `the strategy ran longer than its budget of ${budgetMs} ms`, 'STRATEGY_TIMEOUT')), budgetMs)
        return
      }
      if (message.type === 'progress') return task.onProgress(message.fraction)
      settle(() => {
        if (message.type === 'failed' && message.retire) {
          this.all.delete(worker)
          void worker.terminate()
        } else this.idle.push(worker)
        if (message.type === 'done') task.resolve(message.result as never)
        else if (message.type === 'summary') task.resolve(message.summary as never)
        else if (message.type === 'cancelled') task.reject(new EngineCancelled('cancelled'))
        else task.reject(new EngineFailure(message.code, message.message))
        this.dispatch()
      })
    }
    // A crashed thread fails its task and is replaced by a fresh one on the next dispatch.
    const onError = (error: Error) => settle(() => this.drop(worker, task, error.message))
    const onExit = (code: number) => settle(() => this.drop(worker, task, `engine thread exited with code ${code}`))
    worker.on('message', onMessage)
    worker.on('error', onError)
    worker.on('exit', onExit)
    worker.postMessage(task.request)
  }

  private drop(worker: Worker, task: Task, message: string, code = 'ENGINE_ERROR'): void {
    this.all.delete(worker)
    void worker.terminate()
    task.reject(new EngineFailure(code, message))
    this.dispatch()
  }
}
