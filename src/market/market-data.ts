import type { Config } from '../config.js'
import type { Soon } from '../http/soon.js'
import { KlineArchive } from './archive/kline-archive.js'
import { RedisCacheStore } from './cache-store.js'
import { type CachedResponse, type CachePolicy, ResponseCache } from './response-cache.js'
import { canonicalQuery, type UpstreamCall, UpstreamClient, type UpstreamClientOptions } from './upstream-client.js'

/** One upstream call with how long its answer stays fresh. */
export interface UpstreamRequest extends Omit<UpstreamCall, 'query'>, CachePolicy {
  query: Record<string, string | number | undefined>
}

/**
 * A market request is given up after this long, so a dead or stalled upstream yields a 502 within the
 * 3 s the issue allows, composite endpoints (several upstream calls one after another) included.
 */
export const REQUEST_DEADLINE_MS = 2_500

/** The upstream client and the cache in front of it: what Services holds as `market`. */
export class MarketData {
  constructor(
    readonly client: UpstreamClient,
    readonly cache: ResponseCache,
    /** Binance's public data archive (UPSTREAM_ARCHIVE_URL) for history; undefined when off. */
    readonly archive?: KlineArchive,
  ) {}

  /** A view of the market for one incoming request: every fetch through it shares one deadline. */
  session(): MarketSession {
    return new MarketSession(this, performance.now() + REQUEST_DEADLINE_MS)
  }

  async close(): Promise<void> {
    await Promise.all([this.client.close(), this.cache.close()])
  }
}

export class MarketSession {
  constructor(
    private readonly market: MarketData,
    readonly deadline: number,
  ) {}

  /** The upstream answer to `request`, from the cache when fresh (then at once, not in a promise: http/soon.ts). */
  fetch(request: UpstreamRequest): Soon<CachedResponse> {
    const { client, cache } = this.market
    const call: UpstreamCall = { host: request.host, path: request.path, query: canonicalQuery(request.query), weight: request.weight }
    const key = `${client.baseUrl(call.host) ?? 'none'}${call.path}?${call.query}`
    return cache.get(key, request, (refresh) => client.get(call, this.deadline, refresh), this.deadline)
  }
}

export interface MarketOptions extends Partial<Omit<UpstreamClientOptions, 'now'>> {
  /** Called with Redis errors (the cache then works from memory and the upstream). */
  onCacheError?: (error: unknown) => void
}

/** The market data of a node: upstream from config, the cache in Redis when REDIS_URL is set. */
export function createMarketData(config: Config, now: () => number, options: MarketOptions = {}): MarketData {
  const client = new UpstreamClient({ apiUrl: config.upstreamUrl, dataUrl: config.upstreamDataUrl, ...options, now })
  const shared = config.redisUrl ? new RedisCacheStore(config.redisUrl, options.onCacheError) : undefined
  const archiveUrl = config.upstreamArchiveUrl === 'off' ? undefined : config.upstreamArchiveUrl
  const archive = archiveUrl ? new KlineArchive(archiveUrl) : undefined
  return new MarketData(client, new ResponseCache(now, shared), archive)
}
