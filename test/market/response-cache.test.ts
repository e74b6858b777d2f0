import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ResponseCache } from '../../src/market/response-cache.js'
import { metrics } from '../../src/ops/registry.js'
import { unavailable } from '../../src/market/upstream-client.js'
import { TestClock } from '../support/app.js'

const policy = { ttlMs: 1000, staleMs: 5000 }
const deadline = () => performance.now() + 2000

/** A load whose answers the test releases, counting how often it was called. */
function gatedLoad() {
  let calls = 0
  let release: (() => void) | undefined
  const load = async () => {
    calls++
    await new Promise<void>((resolve) => {
      release = resolve
    })
    return { status: 200, body: `[${calls}]` }
  }
  return { load, calls: () => calls, release: () => release?.() }
}

describe('ResponseCache (memory)', () => {
  it('coalesces concurrent requests for one key into one load', async () => {
    const clock = new TestClock()
    const cache = new ResponseCache(clock.now, undefined)
    const gate = gatedLoad()
    const waiting = Array.from({ length: 50 }, () => cache.get('k', policy, gate.load, deadline()))
    await new Promise((resolve) => setImmediate(resolve))
    gate.release()
    const answers = await Promise.all(waiting)
    assert.equal(gate.calls(), 1)
    assert.ok(answers.every((answer) => answer === answers[0]))
    assert.equal(answers[0]!.body, '[1]')
  })

  it('serves a fresh answer without loading, and loads again once the TTL has passed', async () => {
    const clock = new TestClock()
    const cache = new ResponseCache(clock.now, undefined)
    let calls = 0
    const load = async () => ({ status: 200, body: String(++calls) })
    assert.equal((await cache.get('k', policy, load, deadline())).body, '1')
    clock.advance(999)
    assert.equal((await cache.get('k', policy, load, deadline())).body, '1')
    clock.advance(1)
    assert.equal((await cache.get('k', policy, load, deadline())).body, '2')
    assert.equal((await cache.get('other', policy, load, deadline())).body, '3')
  })

  it('hands a fresh answer over at once, not in a promise, and counts each hit', async () => {
    const clock = new TestClock()
    const cache = new ResponseCache(clock.now, undefined)
    const hits = async () => (await metrics.cacheRequests.get()).values.find((value) => value.labels.result === 'hit')?.value ?? 0
    const loaded = cache.get('k', policy, async () => ({ status: 200, body: 'x' }), deadline())
    assert.ok(loaded instanceof Promise, 'a miss loads')
    await loaded
    const before = await hits()
    const held = cache.get('k', policy, async () => assert.fail('fresh: no load'), deadline())
    assert.ok(!(held instanceof Promise), 'a fresh answer is at hand')
    assert.equal(held.body, 'x')
    cache.get('k', policy, async () => assert.fail('fresh: no load'), deadline())
    assert.equal(await hits(), before + 2)
    clock.advance(policy.ttlMs)
    assert.ok(cache.get('k', policy, async () => ({ status: 200, body: 'y' }), deadline()) instanceof Promise, 'past its TTL it loads again')
  })

  it('serves the stale answer while the upstream is unavailable, until it is too old', async () => {
    const clock = new TestClock()
    const cache = new ResponseCache(clock.now, undefined)
    await cache.get('k', policy, async () => ({ status: 200, body: 'good' }), deadline())
    const failing = async (): Promise<never> => {
      throw unavailable('down')
    }
    clock.advance(policy.ttlMs + policy.staleMs - 1)
    assert.equal((await cache.get('k', policy, failing, deadline())).body, 'good')
    clock.advance(1)
    await assert.rejects(async () => cache.get('k', policy, failing, deadline()), { code: 'UPSTREAM_UNAVAILABLE' })
  })

  it('tells the load whether an older answer is held to fall back on', async () => {
    const clock = new TestClock()
    const cache = new ResponseCache(clock.now, undefined)
    const seen: boolean[] = []
    const load = async (refresh: boolean) => (seen.push(refresh), { status: 200, body: 'x' })
    await cache.get('k', policy, load, deadline())
    clock.advance(policy.ttlMs)
    await cache.get('k', policy, load, deadline())
    clock.advance(policy.ttlMs + policy.staleMs)
    await cache.get('k', policy, load, deadline())
    assert.deepEqual(seen, [false, true, false])
  })

  it('does not hide other errors behind a stale answer', async () => {
    const clock = new TestClock()
    const cache = new ResponseCache(clock.now, undefined)
    await cache.get('k', policy, async () => ({ status: 200, body: 'good' }), deadline())
    clock.advance(policy.ttlMs)
    await assert.rejects(async () =>
      cache.get('k', policy, async () => {
        throw new Error('bug')
      }, deadline()),
      /bug/,
    )
  })

  it('derives a view once per answer', async () => {
    const cache = new ResponseCache(new TestClock().now, undefined)
    const entry = await cache.get('k', policy, async () => ({ status: 200, body: '[1,2]' }), deadline())
    let computed = 0
    const view = () => entry.derive('sum', () => (++computed, (JSON.parse(entry.body) as number[]).length))
    assert.equal(view(), 2)
    assert.equal(view(), 2)
    assert.equal(computed, 1)
  })
})
