/**
 * Coalesces concurrent calls into batches: a call made while a batch is in flight joins the next
 * one, so N concurrent callers cost about one statement per round trip instead of N. An idle
 * coalescer runs a call at once (no timer, no added latency at low load). Unlike GroupCommit (a
 * write-behind log whose writer hears failures), every call gets its own result, and a failed batch
 * fails only its own calls.
 */
export class Coalescer<I, O> {
  private pending: { item: I; resolve: (value: O) => void; reject: (error: unknown) => void }[] = []
  private inflight = 0

  constructor(
    /** Runs one batch; answers one result per item, in order. */
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly maxInflight = 1,
    private readonly maxBatch = 1000,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.pending.push({ item, resolve, reject })
      this.next()
    })
  }

  private next(): void {
    if (this.inflight >= this.maxInflight || this.pending.length === 0) return
    const batch = this.pending.length <= this.maxBatch ? this.pending : this.pending.slice(0, this.maxBatch)
    this.pending = batch === this.pending ? [] : this.pending.slice(this.maxBatch)
    this.inflight++
    this.run(batch.map((entry) => entry.item))
      .then(
        (results) => batch.forEach((entry, i) => entry.resolve(results[i]!)),
        (error: unknown) => batch.forEach((entry) => entry.reject(error)),
      )
      .finally(() => {
        this.inflight--
        this.next()
      })
  }
}
