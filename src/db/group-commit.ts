/**
 * Writes items as they come, in order, at most one write in flight and at most one write per
 * `spacingMs` (drain writes at once): whatever arrives meanwhile goes into the next write. A short
 * run of items is one write at the end; a long one is written as it goes, never more than spacingMs
 * behind (group commit).
 */
export class GroupCommit<T> {
  private pending: T[] = []
  private inflight: Promise<void> | undefined
  private timer: NodeJS.Timeout | undefined
  private lastWrite: number
  private failure: unknown

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly spacingMs: number,
  ) {
    this.lastWrite = Date.now()
  }

  add(item: T): void {
    this.pending.push(item)
    this.schedule()
  }

  /** Writes everything added so far, now; rejects with the first failed write's error. */
  async drain(): Promise<void> {
    while (this.inflight || (this.pending.length > 0 && this.failure === undefined)) {
      clearTimeout(this.timer)
      this.timer = undefined
      if (!this.inflight) this.start()
      await this.inflight
    }
    if (this.failure !== undefined) throw this.failure
  }

  private schedule(): void {
    if (this.inflight || this.timer || this.pending.length === 0 || this.failure !== undefined) return
    const wait = this.lastWrite + this.spacingMs - Date.now()
    if (wait <= 0) return this.start()
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.schedule()
    }, wait)
    this.timer.unref()
  }

  private start(): void {
    const items = this.pending
    this.pending = []
    this.lastWrite = Date.now()
    this.inflight = this.write(items).then(
      () => undefined,
      (error: unknown) => void (this.failure = error),
    )
    void this.inflight.then(() => {
      this.inflight = undefined
      this.schedule()
    })
  }
}
