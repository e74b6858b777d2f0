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

  it('gives misses of one key one load while it is in flight, and loads afresh once it landed', async () => {
    const cache = new ReadCache<number>(1000)
    let loads = 0
    let release!: () => void
    const gate = new Promise<void>((resolve) => (release = resolve))
    const load = async () => {
      const n = ++loads
      await gate
      return n
    }
    const reads = [cache.get('k', 0, load), cache.get('k', 1, load), cache.get('other', 1, load), cache.get('k', 2, load)]
    assert.equal(loads, 2, 'one load for k, one for other')
    release()
    assert.deepEqual(await Promise.all(reads), [1, 1, 2, 1])
    assert.equal(cache.get('k', 999, load), 1, 'kept: a hit at once')
    assert.equal(await cache.get('k', 1000, load), 3, 'expired: a load of its own')
  })

  it('starts a load of its own for a miss after a write, so it never gets the row read before it', async () => {
    const cache = new ReadCache<string>(60_000)
    let row = 'old'
    const gates: (() => void)[] = []
    let loads = 0
    const load = async () => {
      loads++
      const seen = row
      await new Promise<void>((resolve) => gates.push(resolve))
      return seen
    }
    const before = cache.get('k', 0, load)
    row = 'new'
    cache.invalidate('k')
    const after = cache.get('k', 1, load)
    const alongside = cache.get('k', 2, load)
    assert.equal(loads, 2, 'the read after the write did not join the one before it; the next joined it')
    for (const open of gates) open()
    assert.deepEqual(await Promise.all([before, after, alongside]), ['old', 'new', 'new'])
    assert.equal(cache.get('k', 3, load), 'new', 'the load after the write was kept')
  })

  it('starts a load of its own for a miss after clear(), as after a write', async () => {
    const cache = new ReadCache<string>(60_000)
    let row = 'old'
    const gates: (() => void)[] = []
    const load = async () => {
      const seen = row
      await new Promise<void>((resolve) => gates.push(resolve))
      return seen
    }
    const before = cache.get('k', 0, load)
    row = 'new'
    cache.clear() // the key cache's listener reconnected: every entry, and every read in flight, forgotten
    const after = cache.get('k', 1, load)
    assert.equal(gates.length, 2, 'the read after clear() did not join the one before it')
    for (const open of gates) open()
    assert.deepEqual(await Promise.all([before, after]), ['old', 'new'])
    assert.equal(cache.get('k', 2, load), 'new', 'the load after clear() was kept')
  })

  it('shares a failed load with the misses that joined it, and the next miss loads again', async () => {
    const cache = new ReadCache<string>(60_000)
    const failing = countedLoad(() => {
      throw new Error('connection lost')
    })
    const reads = [cache.get('k', 0, failing.load), cache.get('k', 1, failing.load)]
    for (const read of reads) await assert.rejects(Promise.resolve(read), /connection lost/)
    assert.equal(failing.loads(), 1)
    assert.equal(await cache.get('k', 2, async () => 'row'), 'row')
  })

  it('shares the load of a value it may not keep while in flight, and loads it again after', async () => {
    const cache = new ReadCache<string>(60_000)
    const deployed = countedLoad(() => 'deployed')
    const never = () => false
    assert.deepEqual(await Promise.all([cache.get('k', 0, deployed.load, never), cache.get('k', 0, deployed.load, never)]), ['deployed', 'deployed'])
    assert.equal(deployed.loads(), 1)
    assert.equal(await cache.get('k', 1, deployed.load, never), 'deployed')
    assert.equal(deployed.loads(), 2)
  })
})

/** A load that answers `answer()` a turn of the event loop later (so misses meanwhile find it in flight), counting its runs. */
function countedLoad<V>(answer: () => V): { load: () => Promise<V>; loads: () => number } {
  let loads = 0
  return {
    load: async () => {
      loads++
      await new Promise((resolve) => setImmediate(resolve))
      return answer()
    },
    loads: () => loads,
  }
}
