import type { BarColumns } from './kline-codec.js'

interface Entry {
  revision: string
  bars: BarColumns
  bytes: number
}

/**
 * Decoded kline chunks this process has read, each with the stored chunk's revision, least recently
 * used out first within a byte budget. A reader lists the chunks' revisions (no data) and reads and
 * inflates only the chunks it lacks or holds at an older revision, so a copy is never served after
 * another process rewrote the chunk. Reading and inflating BTCUSDT 5m 2023-01..2026-02 (41 chunks,
 * 6.4 MB deflated) took ~100 ms of a 300 ms job on PGlite; listing the revisions takes ~2 ms.
 */
export class KlineChunkCache {
  private readonly entries = new Map<string, Entry>()
  private size = 0

  constructor(readonly maxBytes: number) {}

  /** The chunk's bars if held at exactly this revision (and marks it recently used). */
  get(key: string, revision: string): BarColumns | undefined {
    const entry = this.entries.get(key)
    if (!entry || entry.revision !== revision) return undefined
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.bars
  }

  /** Keeps the chunk's bars (never written to afterwards), dropping the least recently used beyond the budget. */
  set(key: string, revision: string, bars: BarColumns): void {
    const bytes = bars.openTime.byteLength * 6
    this.delete(key)
    if (bytes > this.maxBytes) return
    this.entries.set(key, { revision, bars, bytes })
    this.size += bytes
    for (const [oldest] of this.entries) {
      if (this.size <= this.maxBytes) break
      this.delete(oldest)
    }
  }

  /** Bytes of bars held. */
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

export function chunkKey(symbol: string, interval: string, chunkStart: number): string {
  return `${symbol} ${interval} ${chunkStart}`
}
