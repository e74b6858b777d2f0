import type { BarColumns } from '../backtests/kline-codec.js'

interface Entry<V> {
  version: string
  value: V
  bytes: number
}

/**
 * Decoded history this process has read, each piece with the version of what is stored, least
 * recently used out first within a byte budget. A reader asks the database for the versions only
 * (cheap) and reads and decodes only what it lacks or holds at another version, so a copy is never
 * served after another process changed what is stored.
 */
export class HistoryCache<V> {
  private readonly entries = new Map<string, Entry<V>>()
  private size = 0

  constructor(
    readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  /** The value if held at exactly this version (and marks it recently used). */
  get(key: string, version: string): V | undefined {
    const entry = this.entries.get(key)
    if (!entry || entry.version !== version) return undefined
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
  }

  /** Keeps the value (never written to afterwards), dropping the least recently used beyond the budget. */
  set(key: string, version: string, value: V): void {
    const bytes = this.sizeOf(value)
    this.delete(key)
    if (bytes > this.maxBytes) return
    this.entries.set(key, { version, value, bytes })
    this.size += bytes
    for (const [oldest] of this.entries) {
      if (this.size <= this.maxBytes) break
      this.delete(oldest)
    }
  }

  /** Bytes held. */
  get bytes(): number {
    return this.size
  }

  private delete(key: string): void {
    const entry = this.entries.get(key)
    if (!entry) return
    this.entries.delete(key)
    this.size -= entry.bytes
  }
}

/** Funding events of one symbol in one range, as the engine takes them. */
export interface FundingColumns {
  time: Float64Array
  rate: Float64Array
  /** NaN where the exchange recorded no mark price. */
  markPrice: Float64Array
}

/** What a node keeps between backtests. */
export interface HistoryCaches {
  /** Decoded kline chunks by symbol, interval and chunk start, at the chunk's revision. */
  klineChunks: HistoryCache<BarColumns>
  /** Funding series by symbol and range, at the number of stored events in the range (funding rows are only ever added). */
  funding: HistoryCache<FundingColumns>
}

/**
 * The caches of a node with `megabytes` for decoded bars (HISTORY_CACHE_MB) and a sixteenth of that
 * for funding (0: nothing is kept). Reading and inflating BTCUSDT 5m 2023-01..2026-02 (41 chunks,
 * 6.4 MB deflated) took ~100 ms of a 300 ms job on PGlite, listing the chunks' revisions ~2 ms; reading
 * its 3,500 funding events 10-20 ms, counting them ~1 ms. 64 MB of bars is 1 M bars at eight columns
 * (three such series).
 */
export function historyCaches(megabytes: number): HistoryCaches {
  const klineBytes = megabytes * 1024 * 1024
  return {
    klineChunks: new HistoryCache<BarColumns>(klineBytes, (bars) => bars.openTime.byteLength * 8),
    funding: new HistoryCache<FundingColumns>(klineBytes / 16, (funding) => funding.time.byteLength * 3),
  }
}
