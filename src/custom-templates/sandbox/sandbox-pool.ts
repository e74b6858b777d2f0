import { AppError } from '../../http/errors.js'
import { SANDBOX_LIMITS } from './limits.js'
import type { SandboxRequest } from './sandbox-thread.js'
import { SandboxWorker } from './sandbox-worker.js'
import { StrategyError } from './strategy-error.js'

interface Call {
  userId: number
  request: SandboxRequest
  limitMs: number
  resolve: (value: unknown) => void
  reject: (error: unknown) => void
}

interface Slot {
  worker: SandboxWorker | undefined
  busy: boolean
}

/**
 * The API's sandbox threads, shared between users fairly. One thread served every user's uploads and
 * params checks in turn, so one user's slow module (each call up to its 5 s bound) delayed everyone's;
 * now a user has at most SANDBOX_LIMITS.apiCallsPerUser calls running, the rest of theirs wait in their
 * own order behind them, and a free thread takes the oldest waiting call of a user under that limit. With
 * two threads or more, another user's call starts at once; with every thread busy it waits for one call.
 * A user with apiWaitingPerUser calls already waiting is refused (429) rather than queued without end.
 * Each call gets a fresh QuickJS instance; its time bound runs from when its thread takes it, not while
 * it waits; a thread a module stopped (timeout, crash) is replaced.
 */
export class SandboxPool {
  private readonly slots: Slot[]
  /** Calls not started yet, oldest first (each user's in their own order). */
  private readonly waiting: Call[] = []
  /** Calls running per user, for users with any running. */
  private readonly running = new Map<number, number>()
  /** When each user's last call started (a count of starts): the user served longest ago goes next. */
  private readonly lastStart = new Map<number, number>()
  private starts = 0
  private closed = false

  constructor(threads: number) {
    this.slots = Array.from({ length: threads }, () => ({ worker: undefined, busy: false }))
  }

  /** Runs `request` for `userId` on a thread within `limitMs` once the user's turn comes. */
  call<T>(userId: number, request: SandboxRequest, limitMs: number): Promise<T> {
    const { apiCallsPerUser, apiWaitingPerUser } = SANDBOX_LIMITS
    if (this.closed) return Promise.reject(new StrategyError('STRATEGY_ERROR', 'the sandbox was closed'))
    if (this.waitingOf(userId) >= apiWaitingPerUser) {
      const seconds = Math.ceil(SANDBOX_LIMITS.hardCallMs / 1000)
      return Promise.reject(
        new AppError('RATE_LIMITED', `at most ${apiCallsPerUser} of your uploads or params checks runs at a time and ${apiWaitingPerUser} wait; retry when one ends`, {
          headers: { 'retry-after': String(seconds) },
        }),
      )
    }
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({ userId, request, limitMs, resolve: resolve as (value: unknown) => void, reject })
      this.dispatch()
    })
  }

  async close(): Promise<void> {
    this.closed = true
    for (const call of this.waiting.splice(0)) call.reject(new StrategyError('STRATEGY_ERROR', 'the sandbox was closed'))
    await Promise.all(this.slots.map((slot) => slot.worker?.close()))
  }

  private waitingOf(userId: number): number {
    let n = 0
    for (const call of this.waiting) if (call.userId === userId) n++
    return n
  }

  /**
   * Gives each free thread the oldest waiting call of the user, under the limit of running calls, whose last
   * call started longest ago (never: first). Users take turns: oldest-first alone let a user with calls
   * waiting take back the thread its call just freed, so with SANDBOX_THREADS=1 another user waited for
   * all of them (38 s behind five uploads that each burned the 5 s bound, issue 34), now for one.
   */
  private dispatch(): void {
    for (const slot of this.slots) {
      if (slot.busy) continue
      let at = -1
      for (let k = 0; k < this.waiting.length; k++) {
        const user = this.waiting[k]!.userId
        if ((this.running.get(user) ?? 0) >= SANDBOX_LIMITS.apiCallsPerUser) continue
        if (at < 0 || (this.lastStart.get(user) ?? -1) < (this.lastStart.get(this.waiting[at]!.userId) ?? -1)) at = k
      }
      if (at < 0) return
      const call = this.waiting.splice(at, 1)[0]!
      this.start(slot, call)
    }
  }

  private start(slot: Slot, call: Call): void {
    slot.busy = true
    this.running.set(call.userId, (this.running.get(call.userId) ?? 0) + 1)
    this.lastStart.set(call.userId, this.starts++)
    if (!slot.worker?.alive) slot.worker = new SandboxWorker()
    slot.worker
      .request(call.request, call.limitMs)
      .then(call.resolve, call.reject)
      .finally(() => {
        slot.busy = false
        const left = this.running.get(call.userId)! - 1
        if (left === 0) this.running.delete(call.userId)
        else this.running.set(call.userId, left)
        // With nothing waiting there is no turn to keep: a user's entry goes when its calls do, so the map stays small.
        if (left === 0 && this.waiting.length === 0) this.lastStart.delete(call.userId)
        if (!this.closed) this.dispatch()
      })
  }
}
