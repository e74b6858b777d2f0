import { sql } from 'kysely'
import type { Db } from '../db/connect.js'
import { type ArchiveFile, archivable, type KlineKind, planKlineFiles } from '../market/archive/archive-files.js'
import type { ArchiveOutcome, KlineArchive } from '../market/archive/kline-archive.js'
import { awaitFile, claimFiles, NODE_ID, releaseFiles } from './archive-claims.js'
import type { FundingColumns, HistoryCaches } from '../work/history-cache.js'
import { BAR_COLUMNS, type BarColumns, barsFromRows, concatBars, decodeBars, encodeBarsAsync, sliceBars, type StoredBar } from './kline-codec.js'

/** A kline as stored and served: the engine's bar input with quote volume and trades. */
export type KlineRow = StoredBar

export interface FundingRow {
  fundingTime: number
  fundingRate: number
  markPrice: number | null
}

/** The klines archive and where a file it refused is said (its span then comes over REST). */
export interface ArchiveSource {
  client: KlineArchive
  warn(details: Record<string, unknown>, message: string): void
  /** The node's name in download claims (archive-claims.ts); this process's by default. */
  node?: string
}

/** Where history comes from when it is not stored yet: the upstream exchange (market/ implements it). */
export interface HistorySource {
  klines(symbol: string, interval: string, startTime: number, endTime: number, limit: number): Promise<KlineRow[]>
  /** GET /fapi/v1/markPriceKlines as kline rows (volume 0); a source without it cannot fill mark-price bars. */
  markPriceKlines?(symbol: string, interval: string, startTime: number, endTime: number, limit: number): Promise<KlineRow[]>
  fundingRates(symbol: string, startTime: number, endTime: number, limit: number): Promise<FundingRow[]>
}

export type { FundingColumns } from '../work/history-cache.js'

/** Upstream page sizes (the exchange's maxima for these endpoints). */
const KLINE_PAGE = 1500
const FUNDING_PAGE = 1000
/** Bars per stored chunk: a month of 5m bars, a year of 1h bars. */
const CHUNK_BARS = 8192
/** Chunks read, encoded and written together by a store: 16 × 8192 bars, ~8 MB of columns. */
const STORE_GROUP = 16

/**
 * Klines for open times in [start, end], from the store; spans never fetched are fetched once from
 * the source (within its weight budget) and stored, so a second backtest over the same range makes
 * no upstream call. With an `archive`, whole months and days come from its files, and only the rest
 * (the last day or two, partial days, refused files) over REST; the bars stored are the same. `now` is
 * the exchange's clock (its serverTime), never ours: a bar whose close time is after it is still
 * forming, and is neither returned nor stored. Gaps the exchange
 * has stay gaps: they are covered, so never fetched again. Chunks already decoded at their current
 * revision come from `caches`. The columns are in shared memory (see concatBars).
 */
export async function loadBars(
  db: Db,
  source: HistorySource,
  caches: HistoryCaches,
  request: BarsRequest,
  archive?: ArchiveSource,
): Promise<BarColumns> {
  const end = await fillBars(db, source, request, archive)
  return readBars(db, caches, request.symbol, storedInterval(request), request.intervalMs, request.start, end)
}

export interface BarsRequest {
  symbol: string
  interval: string
  intervalMs: number
  start: number
  end: number
  /** The exchange's clock. */
  now: number
  /** Trade klines (default) or mark-price klines. */
  kind?: KlineKind
}

/**
 * The interval a series is stored under (kline_chunks.interval, and `klines:<it>` in market_coverage):
 * the exchange's interval for trade klines, `mark-<interval>` for mark-price klines. Both columns are
 * free text, so mark-price bars needed no migration; trade klines keep the keys they always had.
 */
export function storedInterval(request: { interval: string; kind?: KlineKind }): string {
  return request.kind === 'markPriceKlines' ? `mark-${request.interval}` : request.interval
}

/**
 * loadBars's first half: stores what the range lacks and returns the last closed bar's open time it
 * covers, reading nothing back (a prefill stores years it does not need in memory).
 */
export async function fillBars(db: Db, source: HistorySource, request: BarsRequest, archive?: ArchiveSource): Promise<number> {
  const { symbol, interval, intervalMs } = request
  const kind = request.kind ?? 'klines'
  const stored = storedInterval(request)
  const lastComplete = Math.floor(request.now / intervalMs) * intervalMs - intervalMs
  const end = Math.min(request.end, lastComplete)
  const dataset = `klines:${stored}`
  await revalidateLegacySpans(db, symbol, dataset, request.now)
  for (const [from, to] of await missingSpans(db, symbol, dataset, request.start, end + 1)) {
    const files = archive && archivable(intervalMs) ? planKlineFiles(symbol, interval, from, to, request.now, kind) : []
    // A year of monthly files at a time, stored before more are held, while the next year downloads.
    const batches: ArchiveFile[][] = []
    for (let first = 0; first === 0 || first < files.length; first += ARCHIVE_BATCH) batches.push(files.slice(first, first + ARCHIVE_BATCH))
    const download = (batch: ArchiveFile[]) => downloadFiles(db, archive, batch, { symbol, dataset, intervalMs })
    let next = download(batches[0]!)
    for (let k = 0, cursor = from; k < batches.length; k++) {
      const [batch, outcomes] = [batches[k]!, next]
      if (k + 1 < batches.length) next = download(batches[k + 1]!)
      const until = k + 1 < batches.length ? batch[batch.length - 1]!.to : to
      const parts = await assembleSpan(source, archive, batch, await outcomes, { ...request, kind, from: cursor, to: until })
      const bars = concatBars(parts)
      const n = bars.openTime.length
      const received = n > 0 ? bars.openTime[n - 1]! + intervalMs : undefined
      await storeBars(db, symbol, stored, intervalMs, bars, [cursor, coveredUntil(cursor, until, received, request.now)], request.now)
      await releaseFiles(db, batch.map((file) => file.path), archive?.node)
      cursor = until
    }
  }
  return end
}

/** How many stored bars open in [start, end]: chunks inside the range by their count, the two at its edges decoded. */
export async function countBars(db: Db, symbol: string, interval: string, intervalMs: number, start: number, end: number): Promise<number> {
  const chunkMs = intervalMs * CHUNK_BARS
  const heads = await chunkHeads(db, symbol, interval, intervalMs, start, end)
  let count = 0
  for (const head of heads) {
    const chunkStart = Number(head.chunk_start)
    if (chunkStart >= start && chunkStart + chunkMs - 1 <= end) count += head.bars
    else {
      const row = await db.selectFrom('kline_chunks').select(['data', 'bars']).where('symbol', '=', symbol).where('interval', '=', interval).where('chunk_start', '=', head.chunk_start as never).executeTakeFirstOrThrow()
      count += sliceBars(decodeBars(row.data, row.bars), start, end).openTime.length
    }
  }
  return count
}

/** Archive files fetched and stored together (12 monthly files of 1m bars: 0.5 M bars, 34 MB of columns). */
const ARCHIVE_BATCH = 12

/**
 * Each file's bars from the archive (started at once; the archive client limits how many download
 * together), or undefined where another job or node stored the file's span meanwhile. A file is
 * claimed first (archive-claims.ts), so nodes sharing the store download it once. Never rejects
 * (a refused file is an outcome), so a batch downloading ahead of the one being stored cannot go unheard.
 */
function downloadFiles(
  db: Db,
  archive: ArchiveSource | undefined,
  files: ArchiveFile[],
  span: { symbol: string; dataset: string; intervalMs: number },
): Promise<(ArchiveOutcome | undefined)[]> {
  if (files.length === 0) return Promise.resolve([])
  const node = archive?.node ?? NODE_ID
  const stored = async (file: ArchiveFile) => (await missingSpans(db, span.symbol, span.dataset, file.from, file.to)).length === 0
  // One look at the coverage and one claim statement for the batch (not three queries a file: 56 files of
  // 5m bars spent ~0.4 s on them through PGlite's worker).
  const batch = async () => {
    const covered = await coverageWithin(db, span.symbol, span.dataset, files[0]!.from, files[files.length - 1]!.to)
    const pending = files.filter((file) => uncovered(covered, file.from, file.to).length > 0)
    return { pending: new Set(pending), claimed: await claimFiles(db, pending.map((file) => file.path), node) }
  }
  const one = async (file: ArchiveFile, ahead: Awaited<ReturnType<typeof batch>>): Promise<ArchiveOutcome | undefined> => {
    try {
      if (!ahead.pending.has(file)) return undefined
      // Another node downloading this file: wait for its bars in the store rather than download it again.
      if (!ahead.claimed.has(file.path) && (await awaitFile(db, file.path, () => stored(file), node)) === 'stored') return undefined
      return await archive!.client.klines(file, span.intervalMs)
    } catch (error) {
      return { ok: false, reason: error instanceof Error ? error.message : String(error) }
    }
  }
  return batch().then(
    (ahead) => Promise.all(files.map((file) => one(file, ahead))),
    (error: unknown) => files.map(() => ({ ok: false as const, reason: error instanceof Error ? error.message : String(error) })),
  )
}

/** The bars of [from, to): the files' where they gave them, REST's around them and for every file refused. */
async function assembleSpan(
  source: HistorySource,
  archive: ArchiveSource | undefined,
  files: ArchiveFile[],
  outcomes: (ArchiveOutcome | undefined)[],
  span: RestSpan,
): Promise<BarColumns[]> {
  const parts: BarColumns[] = []
  let cursor = span.from
  for (const [i, file] of files.entries()) {
    const outcome = outcomes[i]
    if (outcome && !outcome.ok) {
      archive!.warn({ symbol: span.symbol, interval: span.interval, file: file.path, reason: outcome.reason }, 'archive file refused: its span is fetched over REST')
      continue // left to REST with the span around it
    }
    if (file.from > cursor) parts.push(await restBars(source, { ...span, from: cursor, to: file.from }))
    if (outcome) parts.push(outcome.bars)
    cursor = file.to
  }
  if (cursor < span.to) parts.push(await restBars(source, { ...span, from: cursor, to: span.to }))
  return parts
}

interface RestSpan {
  symbol: string
  interval: string
  intervalMs: number
  kind: KlineKind
  from: number
  to: number
  now: number
}

/** Closed bars of [from, to) over REST, page by page within the weight budget. */
async function restBars(source: HistorySource, span: RestSpan): Promise<BarColumns> {
  const { symbol, interval, intervalMs, from, to, now } = span
  const fetchPage = span.kind === 'klines' ? source.klines.bind(source) : source.markPriceKlines?.bind(source)
  if (!fetchPage) throw new Error(`this history source serves no ${span.kind}`)
  const rows: KlineRow[] = []
  for (let cursor = from; cursor < to; ) {
    const page = await fetchPage(symbol, interval, cursor, to - 1, KLINE_PAGE)
    // Only closed bars (close time = open + interval − 1 ms, before the exchange's now) are kept.
    rows.push(...page.filter((row) => row.openTime >= cursor && row.openTime < to && row.openTime + intervalMs <= now))
    if (page.length < KLINE_PAGE) break
    cursor = page[page.length - 1]!.openTime + intervalMs
  }
  return barsFromRows(rows)
}

async function storeBars(db: Db, symbol: string, interval: string, intervalMs: number, bars: BarColumns, span: [number, number], exchangeNow: number) {
  const chunkMs = intervalMs * CHUNK_BARS
  const pieces: { chunkStart: number; fresh: BarColumns }[] = []
  for (let i = 0; i < bars.openTime.length; ) {
    const chunkStart = Math.floor(bars.openTime[i]! / chunkMs) * chunkMs
    let j = i
    while (j < bars.openTime.length && bars.openTime[j]! < chunkStart + chunkMs) j++
    pieces.push({ chunkStart, fresh: sliceBars(bars, bars.openTime[i]!, bars.openTime[j - 1]!) })
    i = j
  }
  await db.transaction().execute(async (trx) => {
    // Two jobs may fetch the same span at once; they merge chunks one after the other.
    await sql`select pg_advisory_xact_lock(hashtext(${`klines:${symbol}:${interval}`}))`.execute(trx)
    // Per group of chunks, one read of those already there and one write of them all (not two statements
    // a chunk), the group deflated side by side on the thread pool meanwhile; groups bound the memory a
    // span of years over REST (hundreds of chunks) holds encoded at once.
    for (let first = 0; first < pieces.length; first += STORE_GROUP) {
      const group = pieces.slice(first, first + STORE_GROUP)
      const existing = await trx
        .selectFrom('kline_chunks')
        .select(['chunk_start', 'bars', 'data'])
        .where('symbol', '=', symbol)
        .where('interval', '=', interval)
        .where('chunk_start', 'in', group.map((piece) => piece.chunkStart) as never[])
        .execute()
      const held = new Map(existing.map((row) => [Number(row.chunk_start), row]))
      const rows = await Promise.all(
        group.map(async ({ chunkStart, fresh }) => {
          const old = held.get(chunkStart)
          const merged = old ? mergeBars(decodeBars(old.data, old.bars), fresh) : fresh
          return { symbol, interval, chunk_start: chunkStart, bars: merged.openTime.length, data: await encodeBarsAsync(merged) }
        }),
      )
      await trx
        .insertInto('kline_chunks')
        .values(rows)
        .onConflict((oc) =>
          oc
            .columns(['symbol', 'interval', 'chunk_start'])
            .doUpdateSet((eb) => ({ bars: eb.ref('excluded.bars'), data: eb.ref('excluded.data'), revision: sql<number>`kline_chunks.revision + 1` })),
        )
        .execute()
    }
    if (span[1] > span[0]) {
      await trx
        .insertInto('market_coverage')
        .values({ symbol, dataset: `klines:${interval}`, from_ms: span[0], to_ms: span[1], exchange_time_ms: exchangeNow })
        .onConflict((oc) => oc.doNothing())
        .execute()
    }
  })
}

/** The stored chunks holding bars of [start, end], in time order: their start, bar count and revision. */
function chunkHeads(db: Db, symbol: string, interval: string, intervalMs: number, start: number, end: number) {
  const chunkMs = intervalMs * CHUNK_BARS
  return db
    .selectFrom('kline_chunks')
    .select(['chunk_start', 'bars', 'revision'])
    .where('symbol', '=', symbol)
    .where('interval', '=', interval)
    .where('chunk_start', '>=', (Math.floor(start / chunkMs) * chunkMs) as never)
    .where('chunk_start', '<=', end as never)
    .orderBy('chunk_start')
    .execute()
}

async function readBars(db: Db, caches: HistoryCaches, symbol: string, interval: string, intervalMs: number, start: number, end: number): Promise<BarColumns> {
  const heads = await chunkHeads(db, symbol, interval, intervalMs, start, end)
  const chunks = new Map<string, BarColumns>()
  const missing: number[] = []
  for (const head of heads) {
    const held = caches.klineChunks.get(chunkKey(symbol, interval, head.chunk_start), head.revision)
    if (held) chunks.set(head.chunk_start, held)
    else missing.push(Number(head.chunk_start))
  }
  if (missing.length > 0) {
    const rows = await db
      .selectFrom('kline_chunks')
      .select(['chunk_start', 'bars', 'data', 'revision'])
      .where('symbol', '=', symbol)
      .where('interval', '=', interval)
      .where('chunk_start', 'in', missing as never[])
      .execute()
    for (const row of rows) {
      const bars = decodeBars(row.data, row.bars)
      caches.klineChunks.set(chunkKey(symbol, interval, row.chunk_start), row.revision, bars)
      chunks.set(row.chunk_start, bars)
    }
  }
  const parts = heads.flatMap((head) => {
    const bars = chunks.get(head.chunk_start)
    return bars ? [sliceBars(bars, start, end)] : []
  })
  return concatBars(parts, { shared: true })
}

/** Bars of `a` and `b` by open time, `b` winning where both have one (a linear merge: both are ascending). */
function mergeBars(a: BarColumns, b: BarColumns): BarColumns {
  const [na, nb] = [a.openTime.length, b.openTime.length]
  if (na === 0 || nb === 0 || a.openTime[na - 1]! < b.openTime[0]!) return concatBars([a, b])
  const out = concatBars([a, b]) // sized for both; filled below, then cut to the merged length
  let [i, j, n] = [0, 0, 0]
  const take = (from: BarColumns, k: number) => {
    for (const name of BAR_COLUMNS) out[name][n] = from[name][k]!
    n++
  }
  while (i < na || j < nb) {
    if (j >= nb || (i < na && a.openTime[i]! < b.openTime[j]!)) take(a, i++)
    else {
      if (i < na && a.openTime[i] === b.openTime[j]) i++
      take(b, j++)
    }
  }
  return Object.fromEntries(BAR_COLUMNS.map((name) => [name, out[name].subarray(0, n)])) as unknown as BarColumns
}

/**
 * Funding events with start ≤ time ≤ end, fetched once per span like klines. Funding rows are only
 * ever added, so the number stored in the range says whether the copy in `caches` is still whole.
 */
export async function loadFunding(
  db: Db,
  source: HistorySource,
  caches: HistoryCaches,
  request: { symbol: string; start: number; end: number; now: number },
): Promise<FundingColumns> {
  const { symbol } = request
  const end = Math.min(request.end, request.now)
  await revalidateLegacySpans(db, symbol, 'funding', request.now)
  for (const [from, to] of await missingSpans(db, symbol, 'funding', request.start, end + 1)) {
    const rows: FundingRow[] = []
    for (let cursor = from; cursor < to; ) {
      const page = await source.fundingRates(symbol, cursor, to - 1, FUNDING_PAGE)
      rows.push(...page.filter((row) => row.fundingTime >= cursor && row.fundingTime < to))
      if (page.length < FUNDING_PAGE) break
      cursor = page[page.length - 1]!.fundingTime + 1
    }
    await db.transaction().execute(async (trx) => {
      for (let i = 0; i < rows.length; i += 500) {
        const values = rows.slice(i, i + 500).map((row) => ({ symbol, funding_time: row.fundingTime, rate: row.fundingRate, mark_price: row.markPrice }))
        await trx.insertInto('funding_events').values(values).onConflict((oc) => oc.doNothing()).execute()
      }
      const last = rows.length > 0 ? rows[rows.length - 1]!.fundingTime + 1 : undefined
      const until = coveredUntil(from, to, last, request.now)
      if (until > from) {
        await trx
          .insertInto('market_coverage')
          .values({ symbol, dataset: 'funding', from_ms: from, to_ms: until, exchange_time_ms: request.now })
          .onConflict((oc) => oc.doNothing())
          .execute()
      }
    })
  }
  const inRange = db
    .selectFrom('funding_events')
    .where('symbol', '=', symbol)
    .where('funding_time', '>=', request.start as never)
    .where('funding_time', '<=', end as never)
  const key = `${symbol} ${request.start} ${end}`
  const { stored } = await inRange.select((eb) => eb.fn.countAll<string>().as('stored')).executeTakeFirstOrThrow()
  const held = caches.funding.get(key, String(stored))
  if (held) return held
  const rows = await inRange.select(['funding_time', 'rate', 'mark_price']).orderBy('funding_time').execute()
  const funding = {
    time: Float64Array.from(rows, (row) => Number(row.funding_time)),
    rate: Float64Array.from(rows, (row) => row.rate),
    markPrice: Float64Array.from(rows, (row) => row.mark_price ?? Number.NaN),
  }
  caches.funding.set(key, String(rows.length), funding)
  return funding
}

/**
 * How far a fetched span counts as known. History older than a week is final: missing bars there are
 * the exchange's gaps. Near now, the exchange may simply not have the bars yet (a replay exchange's
 * clock can also trail ours), so only what was received counts, and the rest is asked again next time.
 */
const SETTLED_MS = 7 * 86_400_000

function coveredUntil(from: number, to: number, afterLastReceived: number | undefined, now: number): number {
  if (to <= now - SETTLED_MS) return to
  return afterLastReceived === undefined ? from : Math.min(to, afterLastReceived)
}

/**
 * Spans stored before migration 0016 were judged closed by our wall clock, which can run ahead of the
 * exchange's (the replay exchange's present is 2025-06-17): the bar forming at the exchange then was stored
 * as final, and spans past its present were marked covered with nothing in them. Their part within a week
 * of the exchange's `now` (or after it) is forgotten, so the next read fetches it again and the final bars
 * replace what was stored (mergeBars: the fresh bar wins). Older history was settled either way. Once a
 * symbol's legacy spans are clipped, this finds nothing to change.
 */
async function revalidateLegacySpans(db: Db, symbol: string, dataset: string, now: number): Promise<void> {
  const settled = now - SETTLED_MS
  await db.transaction().execute(async (trx) => {
    await trx
      .deleteFrom('market_coverage')
      .where('symbol', '=', symbol)
      .where('dataset', '=', dataset)
      .where('exchange_time_ms', 'is', null)
      .where('from_ms', '>=', settled as never)
      .execute()
    await trx
      .updateTable('market_coverage')
      .set({ to_ms: settled })
      .where('symbol', '=', symbol)
      .where('dataset', '=', dataset)
      .where('exchange_time_ms', 'is', null)
      .where('to_ms', '>', settled as never)
      .execute()
  })
}

/** The parts of [from, to) not covered by stored spans of this dataset. */
async function missingSpans(db: Db, symbol: string, dataset: string, from: number, to: number): Promise<[number, number][]> {
  if (to <= from) return []
  return uncovered(await coverageWithin(db, symbol, dataset, from, to), from, to)
}

/** The stored spans of this dataset that overlap [from, to), by start. */
async function coverageWithin(db: Db, symbol: string, dataset: string, from: number, to: number): Promise<[number, number][]> {
  const rows = await db
    .selectFrom('market_coverage')
    .select(['from_ms', 'to_ms'])
    .where('symbol', '=', symbol)
    .where('dataset', '=', dataset)
    .where('to_ms', '>', from as never)
    .where('from_ms', '<', to as never)
    .orderBy('from_ms')
    .execute()
  return rows.map((row) => [Number(row.from_ms), Number(row.to_ms)])
}

/** The parts of [from, to) none of `covered` (sorted by start) holds. */
function uncovered(covered: [number, number][], from: number, to: number): [number, number][] {
  const missing: [number, number][] = []
  let cursor = from
  for (const [a, b] of covered) {
    if (b <= cursor) continue
    if (a >= to) break
    if (a > cursor) missing.push([cursor, Math.min(a, to)])
    cursor = Math.max(cursor, b)
    if (cursor >= to) break
  }
  if (cursor < to) missing.push([cursor, to])
  return missing
}

function chunkKey(symbol: string, interval: string, chunkStart: string): string {
  return `${symbol} ${interval} ${chunkStart}`
}
