import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, it } from 'node:test'
import { type HistoryCaches, historyCaches } from '../../src/work/history-cache.js'
import { type ArchiveSource, loadBars } from '../../src/backtests/history-store.js'
import { UpstreamHistory } from '../../src/backtests/upstream-history.js'
import { KlineArchive } from '../../src/market/archive/kline-archive.js'
import { exchangeServerTime } from '../../src/market/exchange-clock.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'

const HOUR = 3_600_000
// The replay exchange's present is 2025-06-17 08:38 UTC. From 2025-03-10: March's days 10–31 and June's 1–15
// come from daily files, April and May from monthly files (May's is a week past on the 8th), June 16–17 over REST.
const START = Date.UTC(2025, 2, 10)
const RANGE = { symbol: 'BTCUSDT', interval: '1h', intervalMs: HOUR, start: START, end: Date.UTC(2025, 5, 30) }
const APRIL = 'data/futures/um/monthly/klines/BTCUSDT/1h/BTCUSDT-1h-2025-04.zip'
const JOB = { template_id: 'sma_cross', params: { fast: 12, slow: 40, allow_short: true }, symbols: ['BTCUSDT'], timeframe: '1h', start: '2025-03-10T00:00:00Z', end: '2025-06-17T07:00:00Z', capital: '10000' }

for (const backend of backends()) {
  describe(`history from the klines archive (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    let rest: UpstreamHistory
    let warnings: Record<string, unknown>[]
    let archive: (client?: KlineArchive) => ArchiveSource
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true, queue: 'workers' })
      key = await t.createKey(['backtests:read', 'backtests:write'])
      rest = new UpstreamHistory(t.services.market)
      // 10 s: a file of a loaded CI host may take over a second, and its REST fallback would add a request the
      // tests count; the slow-file case gives its own 1 s client.
      archive = (client = new KlineArchive(t.replay!.url, { timeoutMs: 10_000, retries: 0 })) => ({ client, warn: (details) => void warnings.push(details) })
    })
    after(() => t.close())
    beforeEach(async () => {
      warnings = []
      t.replay!.faults.clear()
      await t.database.handle.db.deleteFrom('kline_chunks').execute()
      await t.database.handle.db.deleteFrom('market_coverage').execute()
      t.replay!.resetStats()
    })

    const load = async (source?: ArchiveSource, caches: HistoryCaches = historyCaches(64)) =>
      loadBars(t.database.handle.db, rest, caches, { ...RANGE, now: await exchangeServerTime(t.services.market) }, source)
    const storedChunks = async () =>
      (await t.database.handle.db.selectFrom('kline_chunks').select(['chunk_start', 'bars', 'data']).where('symbol', '=', 'BTCUSDT').orderBy('chunk_start').execute()).map((c) => ({ ...c, data: Buffer.from(c.data).toString('base64') }))
    const restOnly = async () => {
      await t.database.handle.db.deleteFrom('kline_chunks').execute()
      await t.database.handle.db.deleteFrom('market_coverage').execute()
      return { bars: await load(), chunks: await storedChunks() }
    }
    const klineRequests = () => t.replay!.stats().byPath['/fapi/v1/klines'] ?? 0

    it('stores from archived months, archived days and REST exactly the bars REST alone stores', async () => {
      const bars = await load(archive())
      const stats = t.replay!.stats()
      // 22 March days + April + May + 15 June days; only June 16–17 over REST (one page).
      assert.equal(stats.archiveFiles, 22 + 2 + 15)
      assert.equal(klineRequests(), 1)
      assert.deepEqual(warnings, [])
      assert.ok(Number.isFinite(bars.quoteVolume[0]!) && bars.trades[0]! > 0, 'the archive carries quote volume and trades')
      const chunks = await storedChunks()
      const reference = await restOnly()
      assert.equal(bars.openTime.length, reference.bars.openTime.length)
      assert.deepEqual(bars, reference.bars)
      assert.deepEqual(chunks, reference.chunks, 'the stored chunks are byte-identical')
    })

    it('gives a backtest byte-identical results on an archive-filled and a REST-filled store', async () => {
      const run = async () => {
        const created = await t.signed(key, 'POST', '/v1/backtest/jobs', JOB)
        assert.equal(created.statusCode, 200, created.body)
        const id = created.json().id as string
        const done = await poll(`backtest ${id}`, 60_000, async () => {
          t.clock.advance(5000)
          const body = (await t.signed(key, 'GET', `/v1/backtest/jobs/${id}`)).json()
          return body.status === 'queued' || body.status === 'running' ? undefined : body
        })
        assert.equal(done.status, 'done', JSON.stringify(done.error))
        return JSON.stringify({ result: done.result, metrics: done.metrics })
      }
      await load(archive())
      const fromArchive = await run()
      await restOnly()
      // A new revision: the worker's decoded copies of the archive-filled chunks are not served again.
      await t.database.handle.db.updateTable('kline_chunks').set({ revision: 1000 }).execute()
      assert.equal(await run(), fromArchive)
    })

    const faults = [
      { name: 'a missing file (404)', fault: { path: `/${APRIL}`, status: 404 as const }, reason: /HTTP 404/ },
      { name: 'a checksum mismatch', fault: { path: `/${APRIL}`, archive: 'checksum' as const }, reason: /checksum mismatch/ },
      { name: 'a truncated zip', fault: { path: `/${APRIL}`, archive: 'truncated' as const }, reason: /checksum mismatch/ },
      { name: 'a slow file', fault: { path: `/${APRIL}`, latencyMs: 1_500 }, reason: /no answer within 1000 ms/, timeoutMs: 1_000 },
    ]
    for (const { name, fault, reason, timeoutMs } of faults) {
      it(`falls back to REST for the span of ${name}, and says so`, async () => {
        t.replay!.faults.add(fault)
        const bars = await load(archive(timeoutMs ? new KlineArchive(t.replay!.url, { timeoutMs, retries: 0 }) : undefined))
        assert.equal(warnings.length, 1, JSON.stringify(warnings))
        assert.equal(warnings[0]!.file, APRIL)
        assert.match(String(warnings[0]!.reason), reason)
        // April's 720 hours over REST (one page) besides June 16–17's.
        assert.equal(klineRequests(), 2)
        assert.deepEqual(bars, (await restOnly()).bars)
      })
    }

    it('refuses a truncated zip whose checksum was made for the truncated bytes (the zip itself is checked)', async () => {
      // Not a replay fault: the client reads the zip only after the checksum matched, so this checks the zip reader on the same bytes.
      const { readZipEntry } = await import('../../src/binance-formats/zip.js')
      const zip = Buffer.from(await (await fetch(`${t.replay!.url}/${APRIL}`)).arrayBuffer())
      assert.ok((await readZipEntry(zip)).data.length > 0)
      await assert.rejects(readZipEntry(zip.subarray(0, zip.length >> 1)), /truncated or not a zip/)
    })

    it('downloads a month once for two jobs that want it at the same time, on one node or two', async () => {
      const client = new KlineArchive(t.replay!.url)
      t.replay!.faults.add({ path: '/data/', latencyMs: 200 }) // both jobs ask while the first download is under way
      const [a, b] = await Promise.all([load(archive(client)), load(archive(client))])
      assert.deepEqual(a, b)
      assert.equal(t.replay!.stats().archiveByPath[`/${APRIL}`], 1)
      assert.equal(client.stats.files, 22 + 2 + 15)
      // Two nodes sharing the store: one downloads each file, the other waits for its bars in the store.
      await t.database.handle.db.deleteFrom('kline_chunks').execute()
      await t.database.handle.db.deleteFrom('market_coverage').execute()
      t.replay!.resetStats()
      const nodeA = { ...archive(new KlineArchive(t.replay!.url)), node: 'node-a' }
      const nodeB = { ...archive(new KlineArchive(t.replay!.url)), node: 'node-b' }
      const [c, d] = await Promise.all([load(nodeA), load(nodeB)])
      assert.deepEqual(c, d)
      assert.deepEqual(c, a)
      assert.equal(t.replay!.stats().archiveByPath[`/${APRIL}`], 1)
      assert.equal(nodeA.client.stats.files + nodeB.client.stats.files, 22 + 2 + 15)
      assert.equal((await t.database.handle.db.selectFrom('archive_claims').selectAll().execute()).length, 0, 'claims end once the files are stored')
      // A later job finds the month stored and downloads nothing.
      t.replay!.resetStats()
      await load(archive(client))
      assert.equal(t.replay!.stats().archiveFiles, 0)
    })
  })
}
