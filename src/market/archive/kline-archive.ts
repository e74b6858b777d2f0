import crypto from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { type ArchiveFile, checksumPath } from './archive-files.js'
import { ArchiveFormatError, type KlineColumns, parseKlineCsv } from './kline-csv.js'
import { readZipEntry, ZipError } from '../../binance-formats/zip.js'
import { metrics } from '../../ops/registry.js'

export interface KlineArchiveOptions {
  /** Files downloaded at once (each with its checksum). 8: on the replay archive 1h 2019-09..2026-05 (95 small files) stored in ~430 ms against ~550 at 4. */
  concurrency?: number
  /** One file's whole download, headers and body. */
  timeoutMs?: number
  /** Retries of a file after a network error, a time-out or a 5xx/429 (not after a 404 or a bad file). */
  retries?: number
}

/** A file's bars, or why it gave none (its span is then fetched over REST). */
export type ArchiveOutcome = { ok: true; bars: KlineColumns } | { ok: false; reason: string }

/** Counters for benchmarks, the prefill's progress bar and tests. */
export interface ArchiveStats {
  /** Files downloaded and verified. */
  files: number
  /** Files refused or missing. */
  refused: number
  /** Bytes of zips downloaded. */
  bytes: number
  /** Bars read from verified files. */
  bars: number
}

/**
 * Klines from Binance's public data archive (or the replay exchange's copy of its layout). Downloads
 * spend no REST weight: the archive is a static file host with limits of its own, so the client has its
 * own concurrency, time-out and retries. A file is given only when its SHA-256 matches its `.CHECKSUM`
 * and its CSV reads whole; anything else is refused with the reason (the caller warns and uses REST).
 * Two callers asking for one file while it downloads share the download.
 */
export class KlineArchive {
  readonly stats: ArchiveStats = { files: 0, refused: 0, bytes: 0, bars: 0 }
  private readonly inflight = new Map<string, Promise<ArchiveOutcome>>()
  private readonly concurrency: number
  private readonly timeoutMs: number
  private readonly retries: number
  private active = 0
  private readonly queue: (() => void)[] = []

  constructor(
    readonly baseUrl: string,
    options: KlineArchiveOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 8
    this.timeoutMs = options.timeoutMs ?? 30_000
    this.retries = options.retries ?? 2
  }

  /** The bars of one archive file of `intervalMs` bars. */
  klines(file: ArchiveFile, intervalMs: number): Promise<ArchiveOutcome> {
    const held = this.inflight.get(file.path)
    if (held) return held
    const outcome = this.withSlot(() => this.download(file, intervalMs)).finally(() => this.inflight.delete(file.path))
    this.inflight.set(file.path, outcome)
    return outcome
  }

  private async download(file: ArchiveFile, intervalMs: number): Promise<ArchiveOutcome> {
    const refuse = (reason: string): ArchiveOutcome => {
      this.stats.refused++
      metrics.archiveFiles.inc({ outcome: 'failed' })
      return { ok: false, reason }
    }
    const [checksum, zip] = await Promise.all([this.get(checksumPath(file)), this.get(file.path)])
    if (typeof checksum === 'string') return refuse(`${checksumPath(file)}: ${checksum}`)
    if (typeof zip === 'string') return refuse(`${file.path}: ${zip}`)
    const expected = /^([0-9a-f]{64})\s/i.exec(checksum.toString('utf8'))?.[1]?.toLowerCase()
    if (!expected) return refuse(`${checksumPath(file)} holds no SHA-256`)
    const actual = crypto.createHash('sha256').update(zip).digest('hex')
    if (actual !== expected) return refuse(`checksum mismatch: the file's SHA-256 is ${actual}, its .CHECKSUM says ${expected}`)
    try {
      const bars = parseKlineCsv((await readZipEntry(zip)).data, intervalMs, file.from, file.to)
      this.stats.files++
      metrics.archiveFiles.inc({ outcome: 'fetched' })
      this.stats.bytes += zip.length
      this.stats.bars += bars.openTime.length
      return { ok: true, bars }
    } catch (error) {
      if (error instanceof ZipError || error instanceof ArchiveFormatError) return refuse(`${file.path}: ${error.message}`)
      throw error
    }
  }

  /** The body of a file, or why there is none (after the retries a transient failure deserves). */
  private async get(path: string): Promise<Buffer | string> {
    for (let attempt = 0; ; attempt++) {
      let problem: string
      try {
        const response = await fetch(`${this.baseUrl}/${path}`, { signal: AbortSignal.timeout(this.timeoutMs) })
        if (response.status === 200) return Buffer.from(await response.arrayBuffer())
        await response.body?.cancel()
        problem = `HTTP ${response.status}`
        // 404: the archive has no such file (not yet published, or before the symbol's listing).
        if (response.status !== 429 && response.status < 500) return problem
      } catch (error) {
        problem = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : `network error: ${(error as Error).message}`
      }
      if (attempt >= this.retries) return problem
      await sleep(250 * 4 ** attempt)
    }
  }

  private async withSlot<T>(work: () => Promise<T>): Promise<T> {
    if (this.active >= this.concurrency) await new Promise<void>((resolve) => this.queue.push(resolve))
    this.active++
    try {
      return await work()
    } finally {
      this.active--
      this.queue.shift()?.()
    }
  }
}
