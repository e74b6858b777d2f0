import type { Soon } from '../http/soon.js'

/**
 * A read-through cache for rows that only this process writes (embedded mode: one node owns the
 * database). Writers call invalidate() before they write and again after they commit; a read that
 * overlapped either call does not store its result, so a committed change is never hidden by a
 * value read before it. Entries also expire after `ttlMs`.
 * Misses of one key share one load while no write came between them (single flight): when an entry
 * expired under load, every request in flight missed it and each ran its own statement, 50 reloads of one
 * strategy every 5 s in the signed-read bench (docs/decisions/performance.md, issue 36). A miss after an
 * invalidate() starts a load of its own, so it never gets a row read before the write.
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>()
  private readonly generations = new Map<string, number>()
  private readonly loading = new Map<string, { value: Promise<V>; generation: number; epoch: number }>()
  private epoch = 0

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * `keep`: whether a loaded value may be cached (one that others may change unannounced may not). A hit
   * comes back as the value itself, not a promise (http/soon.ts).
   */
  get(key: string, now: number, load: () => Promise<V>, keep?: (value: V) => boolean): Soon<V> {
    const hit = this.entries.get(key)
    if (hit && hit.expiresAt > now) return hit.value
    const generation = this.generations.get(key) ?? 0
    const inFlight = this.loading.get(key)
    if (inFlight && inFlight.generation === generation && inFlight.epoch === this.epoch) return inFlight.value
    const flight = { value: this.loadAndKeep(key, now, load, keep, generation), generation, epoch: this.epoch }
    this.loading.set(key, flight)
    // Only this load's own entry: one begun after a write has replaced it.
    const landed = () => {
      if (this.loading.get(key) === flight) this.loading.delete(key)
    }
    flight.value.then(landed, landed)
    return flight.value
  }

  private async loadAndKeep(key: string, now: number, load: () => Promise<V>, keep: ((value: V) => boolean) | undefined, generation: number): Promise<V> {
    const epoch = this.epoch
    const value = await load()
    if ((this.generations.get(key) ?? 0) === generation && this.epoch === epoch && (keep === undefined || keep(value))) {
      if (this.entries.size >= this.maxEntries) this.entries.clear()
      this.entries.set(key, { value, expiresAt: now + this.ttlMs })
    }
    return value
  }

  /** Forgets every entry; reads in flight do not store what they read. */
  clear(): void {
    this.entries.clear()
    this.epoch++
  }

  invalidate(key: string): void {
    this.entries.delete(key)
    this.generations.set(key, (this.generations.get(key) ?? 0) + 1)
    // Generations only need to outlive reads in flight; keep the map from growing without bound.
    // Clearing them also voids every read in flight (epoch), so none stores a value read before a write.
    if (this.generations.size > this.maxEntries) {
      this.generations.clear()
      this.epoch++
    }
  }
}
