/**
 * Writes items as they come, in order, at most one write in flight and at most one write per
 * `spacingMs` (drain writes at once): whatever arrives meanwhile goes into the next write. A short
 * run of items is one write at the end; a long one is written as it goes, never more than spacingMs
 * behind (group commit). A failed write is handed to `onFailure` with its items, and later items are
 * still written.
 */
export class GroupCommit<T> {
  private pending: T[] = []
  private inflight: Promise<void> | undefined
  private timer: NodeJS.Timeout | undefined
  private lastWrite: number

  constructor(
    private readonly write: (items: T[]) => Promise<void>,
    private readonly spacingMs: number,
    private readonly onFailure: (error: unknown, items: T[]) => void,
  ) {
    this.lastWrite = Date.now()
  }

  add(item: T): void {
    this.pending.push(item)
    this.schedule()
  }

  /** Writes everything added so far, now. */
  async drain(): Promise<void> {
    while (this.inflight || this.pending.length > 0) {
      clearTimeout(this.timer)
      this.timer = undefined
      if (!this.inflight) this.start()
      await this.inflight
    }
  }

  private schedule(): void {
    if (this.inflight || this.timer || this.pending.length === 0) return
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
    const inflight = this.write(items).then(
      () => undefined,
      (error: unknown) => this.onFailure(error, items),
    )
    this.inflight = inflight
    void inflight.then(() => {
      this.inflight = undefined
      this.schedule()
    })
  }
}
