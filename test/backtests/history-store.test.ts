import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { loadBars } from '../../src/backtests/history-store.js'
import { KlineChunkCache } from '../../src/backtests/kline-chunk-cache.js'
import { encodeBars } from '../../src/backtests/kline-codec.js'
import { UpstreamHistory } from '../../src/backtests/upstream-history.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'

const HOUR = 3_600_000
const MB = 1024 * 1024
const at = (day: number, hour = 0) => Date.UTC(2023, 0, day, hour)

for (const backend of backends()) {
  describe(`kline history store with per-process chunk caches (${backend})`, () => {
    let t: TestApp
    let history: UpstreamHistory
    before(async () => {
      t = await startTestApp(backend, {}, { replay: true })
      history = new UpstreamHistory(t.services.market)
    })
    after(() => t.close())

    const load = (cache: KlineChunkCache, start: number, end: number) =>
      loadBars(t.database.handle.db, history, cache, { symbol: 'BTCUSDT', interval: '1h', intervalMs: HOUR, start, end, now: Date.now() })

    it('serves a node its decoded chunks until another node rewrites them, then reads the new revision', async () => {
      // Two nodes: each fetches a different part of one stored chunk (a 1h chunk spans 8,192 hours).
      const nodeA = new KlineChunkCache(64 * MB)
      const nodeB = new KlineChunkCache(64 * MB)
      const early = await load(nodeA, at(1), at(10, 23))
      assert.equal(early.openTime.length, 240)
      assert.ok(early.open.buffer instanceof SharedArrayBuffer, 'bars travel to the engine thread in shared memory')
      assert.ok(nodeA.bytes > 0)
      await load(nodeB, at(11), at(20, 23)) // merges ten more days into the same chunk
      const chunks = await t.database.handle.db.selectFrom('kline_chunks').select(['chunk_start', 'revision']).where('interval', '=', '1h').execute()
      assert.deepEqual(chunks.map((c) => c.revision), ['2'])

      // Node A's copy is older than the stored chunk: it must read the new bars, not serve its own.
      const both = await load(nodeA, at(1), at(20, 23))
      assert.equal(both.openTime.length, 480)
      assert.deepEqual(both, await load(new KlineChunkCache(64 * MB), at(1), at(20, 23)))
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

    it('keeps within its byte budget, dropping the least recently used chunk first', () => {
      const bars = (n: number) => {
        const column = () => new Float64Array(n)
        return { openTime: column(), open: column(), high: column(), low: column(), close: column(), volume: column() }
      }
      const cache = new KlineChunkCache(3 * 4800) // three chunks of 100 bars (48 bytes a bar)
      for (const key of ['a', 'b', 'c']) cache.set(key, '1', bars(100))
      assert.ok(cache.get('a', '1'))
      cache.set('d', '1', bars(100))
      assert.equal(cache.bytes, 3 * 4800)
      assert.equal(cache.get('b', '1'), undefined, 'b was the least recently used')
      assert.ok(cache.get('a', '1') && cache.get('c', '1') && cache.get('d', '1'))
      assert.equal(cache.get('a', '2'), undefined, 'another revision is a miss')
      cache.set('e', '1', bars(1000)) // larger than the whole budget: not kept, evicts nothing
      assert.equal(cache.get('e', '1'), undefined)
      assert.equal(cache.bytes, 3 * 4800)
    })
  })
}
