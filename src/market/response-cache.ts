import { setTimeout as sleep } from 'node:timers/promises'
import type { SharedCacheStore, StoredResponse } from './cache-store.js'
import type { Soon } from '../http/soon.js'
import { isUpstreamUnavailable } from './upstream-client.js'
import { countCacheHit, metrics } from '../ops/registry.js'

/** An upstream answer held by the cache, with views derived from it computed once per answer. */
export class CachedResponse implements StoredResponse {
  private views: Map<string, unknown> | undefined

  constructor(
    readonly status: number,
    readonly body: string,
    readonly storedAt: number,
  ) {}

  /** `compute()` once per answer and name: parsing a 600-row ticker per request would cost ~1 ms each. */
  derive<T>(name: string, compute: () => T): T {
    this.views ??= new Map()
    if (this.views.has(name)) return this.views.get(name) as T
    const value = compute()
    // Names may come from request parameters (a volume filter): past this many views, compute without keeping.
    if (this.views.size < MAX_VIEWS) this.views.set(name, value)
    return value
  }
}

export interface CachePolicy {
  /** How long an answer is served without asking the upstream again. */
  ttlMs: number
  /** How long past its TTL an answer is kept to serve while the upstream is unavailable. */
  staleMs: number
}

/** Fetches an answer; `refresh` is true when an older answer is held to fall back on. */
export type Load = (refresh: boolean) => Promise<Pick<StoredResponse, 'status' | 'body'>>

const POLL_MS = 20
const MISS = { result: 'miss' }
const MAX_VIEWS = 64

/**
 * Upstream answers by key, with request coalescing: while one load of a key is in flight, every other
 * request for it waits for that load instead of starting its own. With a shared store (Redis) the
 * answer is shared across nodes, and a lock makes one node fetch while the others wait for its
 * answer. A load that fails with UPSTREAM_UNAVAILABLE falls back to the last answer kept (stale).
 */
export class ResponseCache {
  private readonly entries = new Map<string, CachedResponse>()
  private readonly flights = new Map<string, Promise<CachedResponse>>()

  constructor(
    private readonly now: () => number,
    private readonly shared: SharedCacheStore | undefined,
    private readonly maxEntries = 10_000,
  ) {}

  /**
   * The fresh answer for `key`, loading it with `load` when there is none. `deadline` (a
   * performance.now() time) bounds the wait for another node's answer. A fresh answer held here is
   * returned as is, not in a promise (http/soon.ts): the gateway's cached reads pay no promise turn for it.
   */
  get(key: string, policy: CachePolicy, load: Load, deadline: number): Soon<CachedResponse> {
    const held = this.entries.get(key)
    if (held && this.isFresh(held, policy)) {
      countCacheHit()
      return held
    }
    let flight = this.flights.get(key)
    // A request joining a load in flight costs the upstream nothing: a hit.
    if (flight) countCacheHit()
    if (!flight) {
      flight = this.refresh(key, policy, load, deadline).finally(() => this.flights.delete(key))
      this.flights.set(key, flight)
    }
    return flight
  }

  async close(): Promise<void> {
    await this.shared?.close()
  }

  private async refresh(key: string, policy: CachePolicy, load: Load, deadline: number): Promise<CachedResponse> {
    let stale = this.entries.get(key)
    let locked = false
    if (this.shared) {
      const stored = await this.fromShared(key)
      if (stored && this.isFresh(stored, policy)) {
        countCacheHit()
        return this.remember(key, stored)
      }
      if (stored && (!stale || stored.storedAt > stale.storedAt)) stale = stored
      locked = await this.shared.lock(key, Math.max(1, deadline - performance.now()))
      if (!locked) {
        const outcome = await this.awaitOtherNode(key, policy, deadline)
        if (outcome.answer) {
          countCacheHit()
          return this.remember(key, outcome.answer)
        }
        locked = outcome.locked
      }
    }
    metrics.cacheRequests.inc(MISS)
    try {
      const loaded = await load(stale !== undefined && this.now() < stale.storedAt + policy.ttlMs + policy.staleMs)
      const entry = new CachedResponse(loaded.status, loaded.body, this.now())
      this.remember(key, entry)
      await this.shared?.set(key, entry, policy.ttlMs + policy.staleMs)
      return entry
    } catch (error) {
      if (isUpstreamUnavailable(error) && stale && this.now() < stale.storedAt + policy.ttlMs + policy.staleMs) return stale
      throw error
    } finally {
      if (locked) await this.shared?.unlock(key)
    }
  }

  /**
   * Polls the shared store while another node fetches: its answer, or the lock once that node gave
   * up (its load failed), or nothing when time runs out (then we fetch without the lock).
   */
  private async awaitOtherNode(key: string, policy: CachePolicy, deadline: number): Promise<{ answer?: CachedResponse; locked: boolean }> {
    while (performance.now() + POLL_MS < deadline) {
      await sleep(POLL_MS)
      const stored = await this.fromShared(key)
      if (stored && this.isFresh(stored, policy)) return { answer: stored, locked: false }
      if (await this.shared!.lock(key, Math.max(1, deadline - performance.now()))) return { locked: true }
    }
    return { locked: false }
  }

  private async fromShared(key: string): Promise<CachedResponse | undefined> {
    const stored = await this.shared!.get(key)
    if (!stored) return undefined
    const held = this.entries.get(key)
    // The same answer as ours: keep our object, and with it the views already derived from it.
    if (held && held.storedAt === stored.storedAt && held.body.length === stored.body.length) return held
    return new CachedResponse(stored.status, stored.body, stored.storedAt)
  }

  private remember(key: string, entry: CachedResponse): CachedResponse {
    if (this.entries.get(key) === entry) return entry
    this.entries.delete(key)
    if (this.entries.size >= this.maxEntries) {
      // Maps iterate in insertion order: the first key is the one written longest ago.
      const oldest = this.entries.keys().next()
      if (!oldest.done) this.entries.delete(oldest.value)
    }
    this.entries.set(key, entry)
    return entry
  }

  private isFresh(entry: StoredResponse, policy: CachePolicy): boolean {
    return this.now() < entry.storedAt + policy.ttlMs
  }
}
