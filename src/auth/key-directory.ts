import type { Db } from '../db/connect.js'
import type { ReadCache } from '../db/read-cache.js'
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
 * Looks up API keys for request verification. In embedded mode (one node) records are cached: a
 * PGlite lookup costs ~250 µs, half of a signed GET. Changes made through this node call forget(),
 * so rotation and revocation hold on the next request. With a PostgreSQL server there is no cache
 * and every request reads the row, since another node may have changed it.
 */
export class KeyDirectory {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    private readonly cache: ReadCache<ApiKeyRecord | undefined> | undefined,
  ) {}

  find(id: string, now = Date.now()): Promise<ApiKeyRecord | undefined> {
    const load = () => this.load(id)
    return this.cache ? this.cache.get(id, now, load) : load()
  }

  forget(id: string): void {
    this.cache?.invalidate(id)
  }

  private async load(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await findActiveApiKey(this.db, id)
    return row && { id: row.id, userId: row.user_id, scopes: new Set(row.scopes as Scope[]), secret: this.box.open(row.secret_enc) }
  }
}
