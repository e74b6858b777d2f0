import type { Worker } from 'node:worker_threads'
import { AppError } from '../../http/errors.js'
import { startWorker } from '../../worker-thread.js'
import type { SandboxReply, SandboxRequest } from './sandbox-thread.js'
import { StrategyError } from './strategy-error.js'
import { metrics, sandboxOutcomeOf } from '../../ops/registry.js'

const OK = { outcome: 'ok' }

interface Pending {
  resolve: (value: unknown) => void
  reject: (error: Error) => void
  timer: NodeJS.Timeout
}

/**
 * One sandbox thread seen from the main thread: requests in order, each under a wall-clock watchdog
 * that terminates the thread when it runs over (the hard bound: a native builtin looping in C ignores
 * QuickJS's interrupt handler, research fact 3; terminate() stopped it in 3 ms). A terminated or crashed
 * thread fails what it was doing and is gone: `alive` turns false and the owner starts another.
 */
export class SandboxWorker {
  private readonly worker: Worker
  private readonly pending = new Map<number, Pending>()
  private nextId = 1
  /** The thread has loaded its code: the watchdog times the strategy, not the thread's start (seconds under tsx). */
  private readonly ready: Promise<void>
  private started = () => undefined as void
  alive = true

  constructor() {
    this.worker = startWorker(new URL('./sandbox-thread.js', import.meta.url), undefined)
    // V8's heap limits do not bound WebAssembly memory (the instance's own Memory maximum does); they
    // bound what the host side of a sandbox thread might leak.
    this.ready = new Promise((resolve) => (this.started = resolve))
    this.worker.on('message', (reply: SandboxReply | 'ready') => (reply === 'ready' ? this.started() : this.settle(reply)))
    this.worker.on('error', (error) => this.fail(new StrategyError('STRATEGY_ERROR', `the sandbox failed: ${error.message}`)))
    this.worker.on('exit', () => this.fail(new StrategyError('STRATEGY_ERROR', 'the sandbox ended after the strategy failed')))
  }

  /** Sends one request; rejects with STRATEGY_TIMEOUT (and ends the thread) after `limitMs`. */
  async request<T>(request: SandboxRequest, limitMs: number): Promise<T> {
    await this.ready
    if (!this.alive) throw new StrategyError('STRATEGY_ERROR', 'the sandbox has ended')
    const id = this.nextId++
    const answer = new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        metrics.sandboxWatchdog.inc()
        this.fail(new StrategyError('STRATEGY_TIMEOUT', `the strategy ran longer than ${limitMs} ms`), id)
      }, limitMs)
      this.pending.set(id, { resolve: resolve as (value: unknown) => void, reject, timer })
      this.worker.postMessage({ id, request })
    })
    answer.then(
      () => metrics.sandboxRuns.inc(OK),
      (error: unknown) => {
        // A params check the module answered (INVALID_PARAMETER) ran fine; only the module's own failures count against it.
        if (error instanceof AppError) metrics.sandboxRuns.inc(OK)
        else metrics.sandboxRuns.inc({ outcome: sandboxOutcomeOf(error instanceof StrategyError ? error.code : undefined) })
      },
    )
    return answer
  }

  /** Ends the thread; whatever it was doing fails. */
  async close(): Promise<void> {
    this.alive = false
    this.fail(new StrategyError('STRATEGY_ERROR', 'the sandbox was closed'))
    await this.worker.terminate()
  }

  private settle(reply: SandboxReply): void {
    const waiting = this.pending.get(reply.id)
    if (!waiting) return
    this.pending.delete(reply.id)
    clearTimeout(waiting.timer)
    if (reply.ok) return waiting.resolve(reply.value)
    const { error } = reply
    waiting.reject(error.kind === 'invalid' ? new AppError('INVALID_PARAMETER', error.message, { field: error.field }) : new StrategyError(error.code, error.message))
  }

  /** Fails `first` with `error` (a timeout) and everything else pending with the thread's end, then ends the thread. */
  private fail(error: StrategyError, first?: number): void {
    this.alive = false
    this.started()
    for (const [id, waiting] of this.pending) {
      clearTimeout(waiting.timer)
      waiting.reject(id === first || first === undefined ? error : new StrategyError('STRATEGY_ERROR', 'the sandbox was stopped by another request of the same run'))
    }
    this.pending.clear()
    void this.worker.terminate()
  }
}
