import { sql } from 'kysely'
import type { Db } from '../db/connect.js'

/**
 * The little state that must be shared by every node serving the API: fixed-window weight counters
 * and the set of signatures already accepted. Embedded mode has one node, so memory serves; with a
 * PostgreSQL server it lives in UNLOGGED tables so N nodes see one budget and one replay set.
 */
export interface SharedState {
  /** Adds `weight` to `bucket` in the window containing `now`; returns the window's total. */
  addWeight(bucket: string, weight: number, windowMs: number, now: number): Promise<number>
  /** True the first time `key` is claimed within `ttlMs`; false for a repeat. */
  claimOnce(key: string, ttlMs: number, now: number): Promise<boolean>
}

export class MemorySharedState implements SharedState {
  private readonly windows = new Map<string, { windowId: number; used: number }>()
  private readonly claims = new Map<string, number>()
  private nextSweep = 0

  async addWeight(bucket: string, weight: number, windowMs: number, now: number): Promise<number> {
    this.sweep(now)
    const windowId = Math.floor(now / windowMs)
    const current = this.windows.get(bucket)
    if (current && current.windowId === windowId) {
      current.used += weight
      return current.used
    }
    this.windows.set(bucket, { windowId, used: weight })
    return weight
  }

  async claimOnce(key: string, ttlMs: number, now: number): Promise<boolean> {
    this.sweep(now)
    const expiresAt = this.claims.get(key)
    if (expiresAt !== undefined && expiresAt > now) return false
    this.claims.set(key, now + ttlMs)
    return true
  }

  /** Drops expired entries at most once a second so memory stays bounded by the traffic of one window. */
  private sweep(now: number): void {
    if (now < this.nextSweep) return
    this.nextSweep = now + 1000
    for (const [key, expiresAt] of this.claims) if (expiresAt <= now) this.claims.delete(key)
    for (const [bucket, { windowId }] of this.windows) if ((windowId + 2) * 60_000 < now) this.windows.delete(bucket)
  }
}

export class PostgresSharedState implements SharedState {
  private nextSweep = 0

  constructor(private readonly db: Db) {}

  async addWeight(bucket: string, weight: number, windowMs: number, now: number): Promise<number> {
    const windowId = Math.floor(now / windowMs)
    const row = await this.db
      .insertInto('rate_windows')
      .values({ bucket, window_id: windowId, used: weight })
      .onConflict((oc) => oc.columns(['bucket', 'window_id']).doUpdateSet({ used: sql`rate_windows.used + ${weight}` }))
      .returning('used')
      .executeTakeFirstOrThrow()
    await this.sweep(now, windowId)
    return row.used
  }

  async claimOnce(key: string, ttlMs: number, now: number): Promise<boolean> {
    const inserted = await this.db
      .insertInto('seen_signatures')
      .values({ signature: key, expires_at: new Date(now + ttlMs) })
      .onConflict((oc) => oc.column('signature').doUpdateSet({ expires_at: new Date(now + ttlMs) }).where('seen_signatures.expires_at', '<=', new Date(now)))
      .returning('signature')
      .executeTakeFirst()
    return inserted !== undefined
  }

  private async sweep(now: number, windowId: number): Promise<void> {
    if (now < this.nextSweep) return
    this.nextSweep = now + 30_000
    await this.db.deleteFrom('seen_signatures').where('expires_at', '<', new Date(now)).execute()
    await this.db.deleteFrom('rate_windows').where('window_id', '<', windowId - 1).execute()
  }
}
