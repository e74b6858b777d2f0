import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ReadCache } from '../../src/db/read-cache.js'

describe('ReadCache', () => {
  it('serves a hit without loading until the entry expires', async () => {
    const cache = new ReadCache<number>(1000)
    let loads = 0
    const load = async () => ++loads
    assert.equal(await cache.get('k', 0, load), 1)
    assert.equal(await cache.get('k', 999, load), 1)
    assert.equal(await cache.get('k', 1000, load), 2)
  })

  it('reloads after invalidate', async () => {
    const cache = new ReadCache<string>(60_000)
    let value = 'old'
    assert.equal(await cache.get('k', 0, async () => value), 'old')
    value = 'new'
    cache.invalidate('k')
    assert.equal(await cache.get('k', 1, async () => value), 'new')
  })

  it('does not store a value read while a write invalidated the key', async () => {
    const cache = new ReadCache<string>(60_000)
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    // A slow read that saw the old row…
    const slowRead = cache.get('k', 0, async () => {
      await gate
      return 'old'
    })
    // …while a writer commits and invalidates.
    cache.invalidate('k')
    release()
    assert.equal(await slowRead, 'old')
    assert.equal(await cache.get('k', 1, async () => 'new'), 'new')
  })

  it('does not store a value read before a write when the generations were trimmed meanwhile', async () => {
    const cache = new ReadCache<string>(60_000, 3)
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const slowRead = cache.get('k', 0, async () => {
      await gate
      return 'old'
    })
    // The key is written, then enough other keys that the generations map is trimmed (k's count with it).
    for (const key of ['k', 'a', 'b', 'c']) cache.invalidate(key)
    release()
    assert.equal(await slowRead, 'old')
    assert.equal(await cache.get('k', 1, async () => 'new'), 'new')
  })

  it('caches undefined (a missing row) like any value', async () => {
    const cache = new ReadCache<string | undefined>(60_000)
    let loads = 0
    await cache.get('k', 0, async () => (loads++, undefined))
    await cache.get('k', 1, async () => (loads++, undefined))
    assert.equal(loads, 1)
  })
})
