import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { type HistoryCaches, historyCaches } from '../../src/work/history-cache.js'
import { loadBars, loadFunding } from '../../src/backtests/history-store.js'
import { encodeBars } from '../../src/backtests/kline-codec.js'
import { UpstreamHistory } from '../../src/backtests/upstream-history.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'

const HOUR = 3_600_000
const at = (day: number, hour = 0) => Date.UTC(2023, 0, day, hour)

for (const backend of backends()) {
  describe(`history store with per-process caches (${backend})`, () => {
    let t: TestApp
    let history: UpstreamHistory
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true })
      history = new UpstreamHistory(t.services.market)
    })
    after(() => t.close())

    const load = (caches: HistoryCaches, start: number, end: number) =>
      loadBars(t.database.handle.db, history, caches, { symbol: 'BTCUSDT', interval: '1h', intervalMs: HOUR, start, end, now: Date.now() })

    it('serves a node its decoded chunks until another node rewrites them, then reads the new revision', async () => {
      // Two nodes: each fetches a different part of one stored chunk (a 1h chunk spans 8,192 hours).
      const nodeA = historyCaches(64)
      const nodeB = historyCaches(64)
      const early = await load(nodeA, at(1), at(10, 23))
      assert.equal(early.openTime.length, 240)
      assert.ok(early.open.buffer instanceof SharedArrayBuffer, 'bars travel to the engine thread in shared memory')
      assert.ok(nodeA.klineChunks.bytes > 0)
      await load(nodeB, at(11), at(20, 23)) // merges ten more days into the same chunk
      const chunks = await t.database.handle.db.selectFrom('kline_chunks').select(['chunk_start', 'revision']).where('interval', '=', '1h').execute()
      assert.deepEqual(chunks.map((c) => c.revision), ['2'])

      // Node A's copy is older than the stored chunk: it must read the new bars, not serve its own.
      const both = await load(nodeA, at(1), at(20, 23))
      assert.equal(both.openTime.length, 480)
      assert.deepEqual(both, await load(historyCaches(64), at(1), at(20, 23)))
      assert.deepEqual(Array.from(both.openTime.subarray(0, 240)), Array.from(early.openTime))
      assert.deepEqual(Array.from(both.close.subarray(0, 240)), Array.from(early.close))

      // At an unchanged revision node A serves its copy without reading the data: a rewrite of the
      // data that (wrongly) kept the revision is invisible to it, and visible once the revision moves.
      const doubled = { ...both, close: both.close.map((x) => x * 2) }
      await t.database.handle.db.updateTable('kline_chunks').set({ data: encodeBars(doubled), bars: 480 }).where('interval', '=', '1h').execute()
      assert.deepEqual((await load(nodeA, at(1), at(20, 23))).close, both.close)
      await t.database.handle.db.updateTable('kline_chunks').set({ revision: sql<number>`revision + 1` }).where('interval', '=', '1h').execute()
      assert.deepEqual((await load(nodeA, at(1), at(20, 23))).close, doubled.close)
    })

    it('serves funding from memory while no event was added to the range, and reads again once one was', async () => {
      const node = historyCaches(64)
      const load = () => loadFunding(t.database.handle.db, history, node, { symbol: 'BTCUSDT', start: at(1), end: at(10, 23), now: Date.now() })
      const first = await load()
      assert.equal(first.time.length, 30, 'three funding events a day')
      assert.equal((await load()).time, first.time, 'the same arrays: served from memory')
      // Another writer stores one more event inside the range (rows are only ever added).
      const extra = at(5, 4)
      await t.database.handle.db.insertInto('funding_events').values({ symbol: 'BTCUSDT', funding_time: extra, rate: 0.0001, mark_price: null }).execute()
      const after = await load()
      assert.equal(after.time.length, 31)
      assert.ok(after.time.includes(extra))
      assert.ok(Number.isNaN(after.markPrice[after.time.indexOf(extra)]!))
    })
  })
}
