import crypto from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { KLINE_CSV_HEADER } from '../../binance-formats/kline-csv.js'
import { writeZip } from '../../binance-formats/zip.js'
import type { ReplayClock } from '../common/clock.js'
import type { Faults } from '../common/faults.js'
import { DAY, isInterval, nominalMs } from '../common/intervals.js'
import { type KlineQuery, type KlineRow, klines } from './klines.js'
import type { Market } from './market.js'
import type { MarketSymbol } from './market-symbol.js'
import { priceKlines } from './price-klines.js'

/** Generated files kept for the next request (a month of 1m klines zips to ~1.5 MB). */
const CACHE_BYTES = 256 * 1024 * 1024
/**
 * Binance's archive files began carrying a header row in 2022 (older files start with the first bar);
 * the replay's files do the same from this month on, so clients meet both.
 */
const HEADER_FROM = Date.UTC(2022, 0, 1)

interface ArchiveEntry {
  zip: Buffer
  checksum: string
}

/** The archive's kline kinds: its folder name and the REST rows of a span. */
const KINDS: Record<string, (symbol: MarketSymbol, query: KlineQuery, now: number) => KlineRow[]> = {
  klines,
  markPriceKlines: (symbol, query, now) => priceKlines(symbol, 'mark', query, now),
}

/**
 * The public data archive's layout (data.binance.vision) over the recorded klines and mark-price klines:
 * `/data/futures/um/{monthly,daily}/{klines,markPriceKlines}/<SYMBOL>/<interval>/<SYMBOL>-<interval>-<YYYY>-<MM>[-<DD>].zip`
 * and `….zip.CHECKSUM` (`<sha256>  <file name>`). A file exists once its whole month or day is before
 * replay now and the recording has bars in it; its rows are the REST rows of that span
 * (/fapi/v1/klines, /fapi/v1/markPriceKlines), so a store filled from here equals one filled over
 * REST. Files are made on the first request and kept.
 */
export function archiveRoutes(app: FastifyInstance, deps: { market: Market; clock: ReplayClock; faults: Faults }): void {
  const cache = new Map<string, ArchiveEntry>()
  let cached = 0
  app.get('/data/futures/um/:period/:kind/:symbol/:interval/:file', async (request, reply) => {
    const { period = '', kind = '', symbol = '', interval = '', file = '' } = request.params as Record<string, string | undefined>
    const rowsOf = Object.hasOwn(KINDS, kind) ? KINDS[kind] : undefined
    const match = /^([A-Z0-9]+)-([0-9a-zA-Z]+)-(\d{4})-(\d{2})(?:-(\d{2}))?\.zip(\.CHECKSUM)?$/.exec(file)
    const notFound = () => reply.code(404).type('text/plain').send(`no such archive file: ${request.url}`)
    if (!rowsOf || !match || match[1] !== symbol || match[2] !== interval || !isInterval(interval) || nominalMs(interval) > DAY) return notFound()
    if ((period === 'daily') !== (match[5] !== undefined) || (period !== 'daily' && period !== 'monthly')) return notFound()
    const [year, month, day] = [Number(match[3]), Number(match[4]) - 1, match[5] === undefined ? undefined : Number(match[5])]
    const from = Date.UTC(year, month, day ?? 1)
    const to = day === undefined ? Date.UTC(year, month + 1, 1) : from + DAY
    const now = deps.clock.now()
    const recorded = deps.market.get(symbol)
    if (!recorded || to > now || new Date(from).getUTCMonth() !== month) return notFound()
    const name = file.replace(/\.CHECKSUM$/, '')
    const key = `${period}/${kind}/${name}`
    let entry = cache.get(key)
    if (!entry) {
      const rows = rowsOf(recorded, { interval, startTime: from, endTime: to - 1, limit: Number.POSITIVE_INFINITY }, now).filter((row) => row[0] < to)
      if (rows.length === 0) return notFound()
      const lines = rows.map((row) => row.join(','))
      const csv = `${from >= HEADER_FROM ? `${KLINE_CSV_HEADER}\n` : ''}${lines.join('\n')}\n`
      const zip = writeZip(name.replace(/\.zip$/, '.csv'), Buffer.from(csv, 'latin1'))
      entry = { zip, checksum: `${crypto.createHash('sha256').update(zip).digest('hex')}  ${name}\n` }
      cache.set(key, entry)
      cached += zip.length
      for (const [oldest, held] of cache) {
        if (cached <= CACHE_BYTES) break
        cache.delete(oldest)
        cached -= held.zip.length
      }
    }
    if (match[6]) {
      const wrong = deps.faults.take(request.url, 'archiveChecksum')
      const checksum = wrong ? `${crypto.createHash('sha256').update('not this file').digest('hex')}  ${name}\n` : entry.checksum
      return reply.type('text/plain').send(checksum)
    }
    const truncated = deps.faults.take(request.url, 'archiveTruncated')
    return reply.type('application/zip').send(truncated ? entry.zip.subarray(0, entry.zip.length >> 1) : entry.zip)
  })
}
