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

/** Whose engine work a run is: the pool takes users in turn, a user's single jobs before its sweeps' runs. */
export interface EngineTurn {
  user: number
  /** 'job': a single backtest someone waits on; 'sweep': one of a sweep's many runs (bulk). */
  lane: 'job' | 'sweep'
}

/** Work of no user (a bench, a test): one owner of its own. */
const NOBODY: EngineTurn = { user: 0, lane: 'job' }

interface Task {
  turn: EngineTurn
  request: EngineRequest
  /** A user's module: the wall-clock budget after which its thread is terminated (STRATEGY_TIMEOUT). */
  budgetMs?: number
  onProgress: (fraction: number) => void
  /** The result, or the RunSummary when the request asked for one. */
  resolve: (result: never) => void
  reject: (error: Error) => void
}

/**
 * The node's engine threads (WORKERS), each running one backtest at a time; CPU work never blocks HTTP.
 * Shared fairly between users (issue 34): the next run is the waiting one of the user with the fewest
 * running (a single job before a sweep's run, then the user served longest ago, then the oldest), and
 * a user with nothing running gets a thread at once even when every thread is busy with others' work,
 * up to `size` such threads beyond `size` (the OS then shares the cores between the threads, as CFS
 * shares them between groups). So a user's hostile module holding a thread for its whole budget never
 * makes another user's job wait for it, and a sweep's queued runs never make a single job wait.
 */
export class EnginePool {
  private readonly idle: Worker[] = []
  private readonly waiting: Task[] = []
  private readonly all = new Set<Worker>()
  /** Runs on a thread now, per user. */
  private readonly runningBy = new Map<number, number>()
  /** When each user last had a run started (a counter), for turns between users with as many running. */
  private readonly servedAt = new Map<number, number>()
  private running = 0
  private started = 0
  private closed = false

  constructor(private readonly size: number) {}

  /** Runs one backtest; `cancel` set to true stops it at the engine's next progress point (within ~65k bars). */
  run(
    input: EngineRequest['input'],
    onProgress: (fraction: number) => void,
    custom?: { job: CustomJob; budgetMs: number },
    turn: EngineTurn = NOBODY,
  ): { result: Promise<BacktestResult>; cancel: () => void } {
    return this.submit<BacktestResult>(input, onProgress, custom, false, turn)
  }

  /** Runs one backtest and answers only its metrics, params and daily equity (a sweep's run). */
  summarize(input: EngineRequest['input'], custom?: { job: CustomJob; budgetMs: number }, turn: EngineTurn = NOBODY): { result: Promise<RunSummary>; cancel: () => void } {
    return this.submit<RunSummary>(input, () => undefined, custom, true, turn)
  }

  private submit<R>(
    input: EngineRequest['input'],
    onProgress: (fraction: number) => void,
    custom: { job: CustomJob; budgetMs: number } | undefined,
    summary: boolean,
    turn: EngineTurn,
  ) {
    const cancel = new SharedArrayBuffer(4)
    const result = new Promise<R>((resolve, reject) => {
      // A run asked for after close() (a handler still loading its history when the node stopped) would
      // otherwise wait forever, and its heartbeat with it: it is cancelled as the waiting ones were.
      if (this.closed) return reject(new EngineCancelled('the engine pool closed'))
      const request: EngineRequest = { input, custom: custom?.job, budgetMs: custom?.budgetMs, cancel, ...(summary ? { summary } : {}) }
      this.waiting.push({ turn, request, budgetMs: custom?.budgetMs, onProgress, resolve: resolve as (result: never) => void, reject })
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
      const at = nextTurn(this.waiting, this.runningBy, this.servedAt)
      const task = this.waiting[at]!
      // Past `size`, only a user with nothing running gets a thread: the next of theirs waits its turn.
      const mine = this.runningBy.get(task.turn.user) ?? 0
      if (!(this.running < this.size || (mine === 0 && this.running < 2 * this.size))) return
      this.waiting.splice(at, 1)
      this.running++
      this.runningBy.set(task.turn.user, mine + 1)
      this.servedAt.set(task.turn.user, ++this.started)
      this.execute(this.idle.pop() ?? this.spawn(), task)
    }
  }

  /** A run left its thread (ended, failed, cancelled or dropped): its user's count and the pool's go down. */
  private release(task: Task): void {
    this.running--
    const left = (this.runningBy.get(task.turn.user) ?? 1) - 1
    if (left > 0) this.runningBy.set(task.turn.user, left)
    else this.runningBy.delete(task.turn.user)
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
      this.release(task)
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

/**
 * Index in `waiting` of the run to start next: of the users with the fewest runs on a thread, a single
 * job before a sweep's run, then the user whose last run started longest ago (never served first), then
 * the oldest waiting. Linear in the waiting runs (a sweep task keeps 4 queued; a node holds a few tasks).
 */
export function nextTurn(waiting: readonly { turn: EngineTurn }[], runningBy: ReadonlyMap<number, number>, servedAt: ReadonlyMap<number, number>): number {
  let best = 0
  let bestKey: [number, number, number] | undefined
  for (let i = 0; i < waiting.length; i++) {
    const { user, lane } = waiting[i]!.turn
    const key: [number, number, number] = [runningBy.get(user) ?? 0, lane === 'job' ? 0 : 1, servedAt.get(user) ?? 0]
    if (bestKey === undefined || key[0] < bestKey[0] || (key[0] === bestKey[0] && (key[1] < bestKey[1] || (key[1] === bestKey[1] && key[2] < bestKey[2])))) {
      best = i
      bestKey = key
    }
  }
  return best
}
