/**
 * One lane per webhook: a node sends each webhook's deliveries one at a time, in the order they were
 * added, and webhooks side by side. `send` answers whether the delivery succeeded; after a failure the
 * deliveries still waiting in that lane are handed to `giveBack` rather than sent to the same failing
 * receiver at once. `queued` counts what waits, not what is in flight: the dispatcher leases more
 * only while it is low, and leases nothing more for a webhook whose lane is full (`full`), so one slow
 * receiver cannot take the room of the others.
 */
export class Lanes<T extends { webhook_id: string }> {
  private readonly waiting = new Map<string, T[]>()
  private readonly running = new Set<Promise<void>>()
  /** Webhooks reported full, until their lane is down to half. */
  private readonly reportedFull = new Set<string>()
  private count = 0
  private refill = false
  private closed = false

  constructor(
    private readonly send: (item: T) => Promise<boolean>,
    /** Takes back items that will not be sent here: after their lane's failure, or withdrawn (drop, close). */
    private readonly giveBack: (items: T[], why: 'after-failure' | 'withdrawn') => void,
    /** Called after each send, so the caller can lease more when the lanes run low. */
    private readonly onProgress: () => void,
    /** Waiting deliveries at which a lane is full. */
    private readonly laneMax: number,
  ) {}

  get queued(): number {
    return this.count
  }

  /** Webhooks whose lanes are full: the dispatcher leases none of their deliveries. */
  full(): string[] {
    const full: string[] = []
    for (const [webhookId, lane] of this.waiting) {
      if (lane.length < this.laneMax) continue
      full.push(webhookId)
      this.reportedFull.add(webhookId)
    }
    return full
  }

  /** True once after a lane reported full is down to half: the dispatcher may lease its deliveries again. */
  takeRefill(): boolean {
    const refill = this.refill
    this.refill = false
    return refill
  }

  /** Adds items to their webhooks' lanes, in the order given; a lane that is idle starts at once. */
  add(items: T[]): void {
    if (this.closed) return this.giveBack(items, 'withdrawn')
    for (const item of items) {
      const lane = this.waiting.get(item.webhook_id)
      this.count += 1
      if (lane) {
        lane.push(item)
        continue
      }
      this.waiting.set(item.webhook_id, [item])
      const run = this.run(item.webhook_id).finally(() => this.running.delete(run))
      this.running.add(run)
    }
  }

  /** Gives back what waits for one webhook (it changed: a new URL, paused, deleted); its delivery in flight finishes. */
  drop(webhookId: string): void {
    const rest = this.waiting.get(webhookId)?.splice(0) ?? []
    this.count -= rest.length
    if (rest.length > 0) this.giveBack(rest, 'withdrawn')
  }

  /** Gives back everything still waiting and resolves when what is in flight has been sent. */
  async close(): Promise<void> {
    this.closed = true
    const rest = [...this.waiting.values()].flatMap((lane) => lane.splice(0))
    this.count -= rest.length
    if (rest.length > 0) this.giveBack(rest, 'withdrawn')
    while (this.running.size > 0) await Promise.all(this.running)
  }

  private async run(webhookId: string): Promise<void> {
    const lane = this.waiting.get(webhookId)!
    try {
      for (let item = lane.shift(); item !== undefined; item = lane.shift()) {
        this.count -= 1
        const delivered = await this.send(item).catch(() => false)
        if (!delivered && lane.length > 0) {
          const rest = lane.splice(0)
          this.count -= rest.length
          this.giveBack(rest, 'after-failure')
        }
        if (this.reportedFull.has(webhookId) && lane.length <= this.laneMax / 2) {
          this.reportedFull.delete(webhookId)
          this.refill = true
        }
        this.onProgress()
      }
    } finally {
      this.waiting.delete(webhookId)
      if (this.reportedFull.delete(webhookId)) this.refill = true
    }
  }
}
