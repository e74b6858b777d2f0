import type { Redis } from 'ioredis'

/** An upstream answer as the cache keeps it. */
export interface StoredResponse {
  status: number
  body: string
  /** Clock time it was received. */
  storedAt: number
}

/**
 * The tier several nodes share (Redis). Memory mode has none: the response cache's own map is the
 * store. Every method fails soft (a miss, a lock not taken): a broken Redis costs upstream calls,
 * never an error to the client.
 */
export interface SharedCacheStore {
  get(key: string): Promise<StoredResponse | undefined>
  set(key: string, value: StoredResponse, keepMs: number): Promise<void>
  /** True when this node may fetch `key` now; false while another node holds the lock. */
  lock(key: string, ms: number): Promise<boolean>
  unlock(key: string): Promise<void>
  close(): Promise<void>
}

const PREFIX = 'perpetua:market:'
const SKIP_AFTER_FAILURE_MS = 5_000

/**
 * Entries as `status \n storedAt \n body`: the body is the upstream's JSON text, kept verbatim, so a
 * read is one GET and no re-encoding of a megabyte of exchange info.
 */
export class RedisCacheStore implements SharedCacheStore {
  private client: Promise<Redis> | undefined
  /** After a failed command Redis is skipped for a while: an outage must not add a timeout to every request. */
  private skipUntil = 0

  constructor(
    private readonly url: string,
    private readonly onError: (error: unknown) => void = () => {},
  ) {}

  /**
   * The client, made on first use: a CLI command that builds services but never reads market data
   * opens no socket, and ioredis is imported only then (0.12 s of a start's module loading, measured).
   */
  private redis(): Promise<Redis> {
    this.client ??= import('ioredis').then(({ Redis }) => {
      const redis = new Redis(this.url, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 1000, commandTimeout: 500 })
      // Connection errors also reject the command that waited for it, which reports them (soft below).
      redis.on('error', () => {})
      return redis
    })
    return this.client
  }

  async get(key: string): Promise<StoredResponse | undefined> {
    const text = await this.soft(async () => (await this.redis()).get(PREFIX + key), null)
    if (text === null) return undefined
    const first = text.indexOf('\n')
    const second = text.indexOf('\n', first + 1)
    const status = Number(text.slice(0, first))
    const storedAt = Number(text.slice(first + 1, second))
    if (first < 0 || second < 0 || !Number.isInteger(status) || !Number.isFinite(storedAt)) return undefined
    return { status, storedAt, body: text.slice(second + 1) }
  }

  async set(key: string, value: StoredResponse, keepMs: number): Promise<void> {
    const text = `${value.status}\n${value.storedAt}\n${value.body}`
    await this.soft(async () => (await this.redis()).set(PREFIX + key, text, 'PX', Math.max(1, Math.ceil(keepMs))), null)
  }

  async lock(key: string, ms: number): Promise<boolean> {
    const taken = await this.soft(async () => (await this.redis()).set(`${PREFIX}lock:${key}`, '1', 'PX', Math.max(1, Math.ceil(ms)), 'NX'), 'OK')
    return taken === 'OK'
  }

  async unlock(key: string): Promise<void> {
    await this.soft(async () => (await this.redis()).del(`${PREFIX}lock:${key}`), 0)
  }

  async close(): Promise<void> {
    if (!this.client) return
    const redis = await this.client
    if (redis.status !== 'ready') {
      redis.disconnect() // also stops reconnecting to a Redis that is down
      return
    }
    try {
      await redis.quit()
    } catch {
      redis.disconnect()
    }
  }

  private async soft<T>(command: () => Promise<T>, fallback: T): Promise<T> {
    if (performance.now() < this.skipUntil) return fallback
    try {
      return await command()
    } catch (error) {
      this.skipUntil = performance.now() + SKIP_AFTER_FAILURE_MS
      this.onError(error)
      return fallback
    }
  }
}
