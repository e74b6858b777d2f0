import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BAR_COLUMNS, type BarColumns } from '../../src/backtests/kline-codec.js'
import { HistoryCache, historyCaches } from '../../src/work/history-cache.js'

/** Bars as the store decodes them: its eight columns of `count` numbers. */
const bars = (count: number) => Object.fromEntries(BAR_COLUMNS.map((name) => [name, new Float64Array(count)])) as unknown as BarColumns

describe('decoded history caches', () => {
  it('keeps within its byte budget, dropping the least recently used first', () => {
    const cache = new HistoryCache<Float64Array>(3 * 800, (value) => value.byteLength) // three values of 100 numbers
    for (const key of ['a', 'b', 'c']) cache.set(key, '1', new Float64Array(100))
    assert.ok(cache.get('a', '1'))
    cache.set('d', '1', new Float64Array(100))
    assert.equal(cache.bytes, 3 * 800)
    assert.equal(cache.get('b', '1'), undefined, 'b was the least recently used')
    assert.ok(cache.get('a', '1') && cache.get('c', '1') && cache.get('d', '1'))
    assert.equal(cache.get('a', '2'), undefined, 'another version is a miss')
    cache.set('e', '1', new Float64Array(1000)) // larger than the whole budget: not kept, evicts nothing
    assert.equal(cache.get('e', '1'), undefined)
    assert.equal(cache.bytes, 3 * 800)
  })

  it('gives a node HISTORY_CACHE_MB of bars and a sixteenth of that of funding; 0 keeps nothing', () => {
    const node = historyCaches(1)
    assert.equal(node.klineChunks.maxBytes, 1024 * 1024)
    assert.equal(node.funding.maxBytes, 64 * 1024)
    // 16,384 bars of eight columns are exactly 1 MB: kept; one more bar is over the budget.
    node.klineChunks.set('fits', '1', bars(16_384))
    assert.equal(node.klineChunks.bytes, 1024 * 1024)
    node.klineChunks.set('over', '1', bars(16_385))
    assert.equal(node.klineChunks.get('over', '1'), undefined)
    const none = historyCaches(0)
    none.klineChunks.set('one', '1', bars(1))
    assert.equal(none.klineChunks.get('one', '1'), undefined)
    assert.equal(none.funding.maxBytes, 0)
  })
})
