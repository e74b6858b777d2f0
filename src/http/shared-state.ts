import type pg from 'pg'
import { Coalescer } from '../db/coalescer.js'
import type { Db } from '../db/connect.js'
import { isRetryableConflict } from '../db/errors.js'
import { SignatureClaims } from './signature-claims.js'
import type { Soon } from './soon.js'

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
  /** As claimOnce, but a repeat learns how long the held claim still runs: 0 when claimed now, else the ms left. */
  claimOrWait(key: string, ttlMs: number, now: number): Promise<number>
  /**
   * One request's admission: claims `claim` (when given) and, only when that claim succeeds,
   * adds `charge.weight` as addWeight does. `used` is the window's total after this charge, or
   * undefined when the claim failed (nothing charged).
   */
  admit(claim: Claim | undefined, charge: Charge, now: number): Soon<Admitted>
}

export interface Admitted {
  claimed: boolean
  used: number | undefined
}

/**
 * What is claimed: a key, or a signature's 32 bytes. The memory store keeps a signature's bytes without a heap
 * object (signature-claims.ts); only PostgreSQL needs its key (claimKey), so a signed request on an embedded
 * node builds none.
 */
export type Claim = { ttlMs: number } & ({ key: string; digest?: undefined } | { digest: Buffer; key?: undefined })

/** A claim's key in the shared table: a signature's is "sig:" and its lowercase hex, as presented. */
export function claimKey(claim: Claim): string {
  return claim.digest ? `sig:${claim.digest.toString('hex')}` : claim.key
}

export interface Charge {
  bucket: string
  weight: number
  windowMs: number
}

export class MemorySharedState implements SharedState {
  private readonly windows = new Map<string, { windowId: number; used: number }>()
  private readonly claims = new Map<string, number>()
  /**
   * The claims in the order they were made, to drop the expired from the front without walking the map:
   * a claim's ttl is one of a few and `now` advances, so the front expires first (a longer ttl ahead holds
   * shorter ones behind it back by at most its own ttl). Sweeping the whole map each second cost 2.8 % of a
   * signed read's samples at 4,000 requests a second (issue 36).
   */
  private readonly made: { keys: string[]; expiresAt: number[]; head: number } = { keys: [], expiresAt: [], head: 0 }
  private nextSweep = 0
  /** The signatures' claims (admit's), apart from the few other keys above. */
  private readonly signatures = new SignatureClaims()

  async addWeight(bucket: string, weight: number, windowMs: number, now: number): Promise<number> {
    return this.charge(bucket, weight, windowMs, now)
  }

  async claimOnce(key: string, ttlMs: number, now: number): Promise<boolean> {
    return this.claim(key, ttlMs, now) === 0
  }

  async claimOrWait(key: string, ttlMs: number, now: number): Promise<number> {
    return this.claim(key, ttlMs, now)
  }

  /** Answered at once, not as a promise: memory needs no wait (soon.ts). */
  admit(claim: Claim | undefined, charge: Charge, now: number): Admitted {
    if (claim && (claim.digest ? this.signatures.claim(claim.digest, claim.ttlMs, now) : this.claim(claim.key, claim.ttlMs, now)) !== 0) {
      return { claimed: false, used: undefined }
    }
    return { claimed: true, used: this.charge(charge.bucket, charge.weight, charge.windowMs, now) }
  }

  private charge(bucket: string, weight: number, windowMs: number, now: number): number {
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

  /** 0 when `key` is claimed now, else the ms its held claim still runs. */
  private claim(key: string, ttlMs: number, now: number): number {
    this.dropExpiredClaims(now)
    const expiresAt = this.claims.get(key)
    if (expiresAt !== undefined && expiresAt > now) return expiresAt - now
    this.claims.set(key, now + ttlMs)
    this.made.keys.push(key)
    this.made.expiresAt.push(now + ttlMs)
    return 0
  }

  /** Drops old windows at most once a second so memory stays bounded by the buckets of two windows. */
  private sweep(now: number): void {
    if (now < this.nextSweep) return
    this.nextSweep = now + 1000
    for (const [bucket, { windowId }] of this.windows) if ((windowId + 2) * 60_000 < now) this.windows.delete(bucket)
  }

  /** Drops the claims expired by `now` from the front of `made` (a key claimed afresh since keeps its newer claim). */
  private dropExpiredClaims(now: number): void {
    const { keys, expiresAt } = this.made
    let head = this.made.head
    for (; head < keys.length && expiresAt[head]! <= now; head++) {
      if (this.claims.get(keys[head]!) === expiresAt[head]) this.claims.delete(keys[head]!)
    }
    if (head > 1024 && head * 2 > keys.length) {
      keys.splice(0, head)
      expiresAt.splice(0, head)
      head = 0
    }
    this.made.head = head
  }
}

/**
 * With a PostgreSQL server every signed request used to cost two round trips here (replay claim, then
 * weight charge) plus a Kysely compile each: ~700 req/s for a signed GET (bench/http.ts, issue 13).
 * Admissions now go through a coalescer: the claims and charges of every request that arrives while
 * one statement is in flight are made by the next statement, one per round trip, with the exact
 * outcome each request would have had alone in arrival order (see admitBatch).
 */
export class PostgresSharedState implements SharedState {
  private nextSweep = 0
  private readonly admissions: Coalescer<Admission, { claimed: boolean; used: number | undefined }>

  constructor(
    private readonly db: Db,
    /** The pool under `db`: the admission statement is a named (server-prepared) one, planned once per connection. */
    private readonly pool: pg.Pool,
  ) {
    // One statement in flight: with 4-8, concurrent batches waited on each other's rate_windows row locks (≥3× slower).
    this.admissions = new Coalescer((items) => this.admitBatch(items), 1)
  }

  async addWeight(bucket: string, weight: number, windowMs: number, now: number): Promise<number> {
    return (await this.admit(undefined, { bucket, weight, windowMs }, now)).used!
  }

  async claimOnce(key: string, ttlMs: number, now: number): Promise<boolean> {
    return (await this.claimOrWait(key, ttlMs, now)) === 0
  }

  async claimOrWait(key: string, ttlMs: number, now: number): Promise<number> {
    const inserted = await this.db
      .insertInto('seen_signatures')
      .values({ signature: key, expires_at: new Date(now + ttlMs) })
      .onConflict((oc) => oc.column('signature').doUpdateSet({ expires_at: new Date(now + ttlMs) }).where('seen_signatures.expires_at', '<=', new Date(now)))
      .returning('signature')
      .executeTakeFirst()
    if (inserted !== undefined) return 0
    // A second round trip only for a refusal; should the claim end in between, the caller still waits ≥ 1 ms.
    const held = await this.db.selectFrom('seen_signatures').select('expires_at').where('signature', '=', key).executeTakeFirst()
    return Math.max(1, (held ? held.expires_at.getTime() : now) - now)
  }

  admit(claim: Claim | undefined, charge: Charge, now: number): Promise<{ claimed: boolean; used: number | undefined }> {
    return this.admissions.submit({ claim, charge, now })
  }

  /**
   * One statement for a batch. A key claimed twice in one batch: the later one is a repeat. Rows are
   * written sorted by key so two nodes' batches lock rows in one order; a deadlock or serialization
   * failure (nothing written) is retried. Each request's `used` is the window total as of its own
   * charge: the total after the batch less what later requests of the batch added to that window.
   */
  private async admitBatch(items: Admission[]): Promise<{ claimed: boolean; used: number | undefined }[]> {
    const seen = new Set<string>()
    const keys = items.map(({ claim }) => (claim ? claimKey(claim) : null))
    const repeat = keys.map((key) => key !== null && (seen.has(key) || !seen.add(key)))
    const rows = items.flatMap((item, n) => (repeat[n] ? [] : [item]).map(({ claim, charge, now }) => ({
      n,
      key: keys[n]!,
      expiresAt: claim ? new Date(now + claim.ttlMs) : null,
      claimedBefore: claim ? new Date(now) : null,
      bucket: charge.bucket,
      windowId: Math.floor(now / charge.windowMs),
      weight: charge.weight,
    })))
    let totals: { n: number; used: number }[] = []
    for (let attempt = 0; rows.length > 0; attempt++) {
      try {
        totals = (await this.pool.query<{ n: number; used: number }>({ name: 'perpetua_admit', text: ADMIT_SQL, values: admitValues(rows) })).rows
        break
      } catch (error) {
        if (attempt >= 3 || !isRetryableConflict(error)) throw error
      }
    }
    const totalOf = new Map(totals.map(({ n, used }) => [n, Number(used)]))
    const results: { claimed: boolean; used: number | undefined }[] = items.map(() => ({ claimed: false, used: undefined }))
    const laterInWindow = new Map<string, number>()
    for (let i = rows.length - 1; i >= 0; i--) {
      const row = rows[i]!
      const total = totalOf.get(row.n)
      if (total === undefined) continue // the claim failed: nothing charged
      const window = `${row.windowId}:${row.bucket}`
      const later = laterInWindow.get(window) ?? 0
      results[row.n] = { claimed: true, used: total - later }
      laterInWindow.set(window, later + row.weight)
    }
    const newest = Math.max(...items.map((item) => item.now))
    await this.sweep(newest, Math.floor(newest / 60_000))
    return results
  }

  private async sweep(now: number, windowId: number): Promise<void> {
    if (now < this.nextSweep) return
    this.nextSweep = now + 30_000
    await this.db.deleteFrom('seen_signatures').where('expires_at', '<', new Date(now)).execute()
    await this.db.deleteFrom('rate_windows').where('window_id', '<', windowId - 1).execute()
  }
}

interface Admission {
  claim: Claim | undefined
  charge: Charge
  now: number
}

interface AdmitRow {
  n: number
  key: string | null
  expiresAt: Date | null
  claimedBefore: Date | null
  bucket: string
  windowId: number
  weight: number
}

/**
 * Claims first (a claim whose key is held and unexpired returns nothing), then charges only the
 * admitted rows, summed per window; answers each admitted row's window total after the statement.
 * Planning this took 0.7 ms of its 1.2 ms on a loaded host, hence the named statement.
 */
const ADMIT_SQL = `
  WITH input AS (
    SELECT * FROM unnest($1::int[], $2::text[], $3::timestamptz[], $4::timestamptz[], $5::text[], $6::bigint[], $7::int[])
      AS t(n, key, expires_at, claimed_before, bucket, window_id, weight)
  ),
  claimed AS (
    INSERT INTO seen_signatures (signature, expires_at)
    SELECT key, expires_at FROM input WHERE key IS NOT NULL ORDER BY key
    ON CONFLICT (signature) DO UPDATE SET expires_at = EXCLUDED.expires_at
      WHERE seen_signatures.expires_at <= (SELECT claimed_before FROM input WHERE input.key = EXCLUDED.signature)
    RETURNING signature
  ),
  admitted AS (
    SELECT n, bucket, window_id, weight FROM input WHERE key IS NULL OR key IN (SELECT signature FROM claimed)
  ),
  charged AS (
    INSERT INTO rate_windows (bucket, window_id, used)
    SELECT bucket, window_id, sum(weight) FROM admitted GROUP BY bucket, window_id ORDER BY bucket, window_id
    ON CONFLICT (bucket, window_id) DO UPDATE SET used = rate_windows.used + EXCLUDED.used
    RETURNING bucket, window_id, used
  )
  SELECT admitted.n, charged.used FROM admitted JOIN charged USING (bucket, window_id)`

function admitValues(rows: AdmitRow[]): unknown[] {
  const column = <K extends keyof AdmitRow>(key: K) => rows.map((row) => row[key])
  return [column('n'), column('key'), column('expiresAt'), column('claimedBefore'), column('bucket'), column('windowId'), column('weight')]
}
