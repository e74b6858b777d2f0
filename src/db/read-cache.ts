import type { Soon } from '../http/soon.js'

/**
 * A read-through cache for rows that only this process writes (embedded mode: one node owns the
 * database). Writers call invalidate() before they write and again after they commit; a read that
 * overlapped either call does not store its result, so a committed change is never hidden by a
 * value read before it. Entries also expire after `ttlMs`.
 */
export class ReadCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>()
  private readonly generations = new Map<string, number>()
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
    return this.loadAndKeep(key, now, load, keep)
  }

  private async loadAndKeep(key: string, now: number, load: () => Promise<V>, keep?: (value: V) => boolean): Promise<V> {
    const generation = this.generations.get(key) ?? 0
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
