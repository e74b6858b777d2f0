import { createHash, type KeyObject } from 'node:crypto'
import type { DatabaseHandle, Db } from '../db/connect.js'
import { type ChannelListener, listenOnChannel } from '../db/listen.js'
import { ReadCache } from '../db/read-cache.js'
import type { Soon } from '../http/soon.js'
import { findActiveApiKey } from './queries.js'
import { signingKey } from './request-signature.js'
import type { Scope } from './scopes.js'
import type { SecretBox } from './secret-box.js'

export interface ApiKeyRecord {
  id: string
  userId: number
  scopes: ReadonlySet<Scope>
  /** The secret, ready for HMAC (request-signature.ts signatureBytes). */
  signingKey: KeyObject
  /** Which secret this is (keyVersion): a rotation changes it, and an open stream of the old one closes. */
  version: string
}

/**
 * The version of a key's secret: base64 SHA-256 of its sealed form, as the api_keys trigger computes it
 * for a rotation (migration 0021), so a node knows which of a key's open streams the new secret opened.
 * A digest of the ciphertext: it says nothing of the secret.
 */
export function keyVersion(secretEnc: string): string {
  return createHash('sha256').update(secretEnc, 'utf8').digest('base64')
}

/** Announces every api_keys row change with the key's id (a trigger, migration 0009). */
export const API_KEY_CHANNEL = 'perpetua_api_keys'
const TTL_MS = 5_000

/**
 * Looks up API keys for request verification, through a cache: a lookup costs a round trip plus an
 * AES-GCM open, on PostgreSQL the largest share of a signed GET (issue 13). Changes made through this
 * node call forget(), so rotation and revocation hold on the next request here.
 * Embedded (`local`): one node owns the database, so the cache is always on. With a PostgreSQL server
 * (`shared`) other nodes change keys too: the cache is on only while follow()'s LISTEN on
 * API_KEY_CHANNEL is connected, each notification drops its key, and a dropped connection clears
 * the cache and turns it off until it is back. A key revoked elsewhere stops working here within the
 * NOTIFY delay; entries also expire after TTL_MS.
 */
export class KeyDirectory {
  private readonly cache = new ReadCache<ApiKeyRecord | undefined>(TTL_MS)
  private caching: boolean

  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
    mode: 'local' | 'shared',
  ) {
    this.caching = mode === 'local'
  }

  /** The key, at once when cached (http/soon.ts). */
  find(id: string, now = Date.now()): Soon<ApiKeyRecord | undefined> {
    const load = () => this.load(id)
    return this.caching ? this.cache.get(id, now, load) : load()
  }

  /** The key as stored now, past the cache: whether an open stream's key is still the one that opened it. */
  current(id: string): Promise<ApiKeyRecord | undefined> {
    return this.load(id)
  }

  forget(id: string): void {
    this.cache.invalidate(id)
  }

  /** Caches keys while LISTENing for changes made by any node (server mode); close the listener on shutdown. */
  async follow(database: DatabaseHandle, onError: (error: unknown) => void): Promise<ChannelListener> {
    const suspend = () => {
      this.caching = false
      this.cache.clear()
    }
    const resume = () => {
      this.cache.clear()
      this.caching = true
    }
    const listener = await listenOnChannel(database, API_KEY_CHANNEL, (id) => this.forget(id), onError, resume, suspend)
    resume()
    return {
      async close() {
        suspend()
        await listener.close()
      },
    }
  }

  private async load(id: string): Promise<ApiKeyRecord | undefined> {
    const row = await findActiveApiKey(this.db, id)
    return row && { id: row.id, userId: row.user_id, scopes: new Set(row.scopes as Scope[]), signingKey: signingKey(this.box.open(row.secret_enc)), version: keyVersion(row.secret_enc) }
  }
}
