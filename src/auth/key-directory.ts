import type { Db } from '../db/connect.js'
import { findActiveApiKey } from './queries.js'
import type { Scope } from './scopes.js'
import type { SecretBox } from './secret-box.js'

export interface ApiKeyRecord {
  id: string
  userId: number
  scopes: ReadonlySet<Scope>
  secret: string
}

/**
 * Looks up API keys for request verification. In embedded mode (one node) records are cached for a
 * few seconds: a PGlite lookup costs ~250 µs, half of a signed GET. Changes made through this node
 * call forget(), so rotation and revocation hold on the next request. With a PostgreSQL server every
 * request reads the row, since another node may have changed it.
 */
export class KeyDirectory {
  private readonly cache = new Map<string, { record: ApiKeyRecord | undefined; expiresAt: number }>()

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly cacheMs: number,
  ) {}

  async find(id: string, now = Date.now()): Promise<ApiKeyRecord | undefined> {
    const cached = this.cacheMs > 0 ? this.cache.get(id) : undefined
    if (cached && cached.expiresAt > now) return cached.record
    const row = await findActiveApiKey(this.db, id)
    const record = row && { id: row.id, userId: row.user_id, scopes: new Set(row.scopes as Scope[]), secret: this.box.open(row.secret_enc) }
    if (this.cacheMs > 0) {
      if (this.cache.size > 10_000) this.cache.clear()
      this.cache.set(id, { record, expiresAt: now + this.cacheMs })
    }
    return record
  }

  forget(id: string): void {
    this.cache.delete(id)
  }
}
