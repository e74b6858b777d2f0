/**
 * Writes items as they come, in order, at most one write in flight: whatever arrives while a write
 * runs goes into the next one. Alone, each item is written at once; under load, writes grow instead
 * of multiplying (group commit).
 */
export class GroupCommit<T> {
  private pending: T[] = []
  private inflight: Promise<void> | undefined
  private failure: unknown

  constructor(private readonly write: (items: T[]) => Promise<void>) {}

  add(item: T): void {
    this.pending.push(item)
    this.kick()
  }

  /** Resolves once everything added so far is written; rejects with the first failed write's error. */
  async drain(): Promise<void> {
    while (this.inflight || (this.pending.length > 0 && this.failure === undefined)) {
      this.kick()
      await this.inflight
    }
    if (this.failure !== undefined) throw this.failure
  }

  private kick(): void {
    if (this.inflight || this.pending.length === 0 || this.failure !== undefined) return
    const items = this.pending
    this.pending = []
    this.inflight = this.write(items).then(
      () => undefined,
      (error: unknown) => void (this.failure = error),
    )
    void this.inflight.then(() => {
      this.inflight = undefined
      this.kick()
    })
  }
}
