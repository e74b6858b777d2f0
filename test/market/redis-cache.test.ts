import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { RedisCacheStore } from '../../src/market/cache-store.js'
import { startReplay, startTestApp, type ReplayExchange, type TestApp } from '../support/app.js'
import { callsTo, deadPort, timedGet } from './helpers.js'

const REDIS_URL = process.env.TEST_REDIS_URL

describe('the market cache in Redis, shared by two nodes', { skip: REDIS_URL ? false : 'TEST_REDIS_URL is not set' }, () => {
  let replay: ReplayExchange
  let a: TestApp
  let b: TestApp
  before(async () => {
    // Entries are keyed by the upstream URL, so this fresh replay exchange starts with an empty cache.
    replay = await startReplay()
    const env = { UPSTREAM_URL: replay.url, REDIS_URL: REDIS_URL! }
    ;[a, b] = await Promise.all([startTestApp('pglite', env), startTestApp('pglite', env)])
  })
  after(async () => {
    await Promise.all([a.close(), b.close()])
    await replay.close()
  })
  const calls = (path: string) => callsTo({ replay } as TestApp, path)

  it('serves one node’s answer to the other without a second upstream call', async () => {
    const first = await timedGet(a, '/funding/rates')
    assert.equal(first.res.statusCode, 200)
    assert.equal(calls('/fapi/v1/premiumIndex'), 1)
    const second = await timedGet(b, '/funding/rates')
    assert.equal(second.res.statusCode, 200)
    assert.equal(second.res.body, first.res.body)
    assert.equal(calls('/fapi/v1/premiumIndex'), 1)
  })

  it('lets one node fetch while the other waits for its answer', async () => {
    replay.faults.add({ path: '/fapi/v1/ticker/24hr', latencyMs: 300, times: 1 })
    const answers = await Promise.all([
      ...Array.from({ length: 10 }, () => timedGet(a, '/ticker/24hr/active')),
      ...Array.from({ length: 10 }, () => timedGet(b, '/fapi/v1/ticker/24hr')),
    ])
    assert.ok(answers.every(({ res }) => res.statusCode === 200))
    assert.equal(calls('/fapi/v1/ticker/24hr'), 1)
  })

  it('keeps serving from the other node’s answer while the upstream fails', async () => {
    const good = await timedGet(a, '/v1/market/exchange-info?symbol=BTCUSDT')
    assert.equal(good.res.statusCode, 200)
    replay.faults.add({ path: '/fapi/v1/exchangeInfo', status: 500 })
    b.clock.advance(61_000) // b sees the entry as stale
    const stale = await timedGet(b, '/v1/market/exchange-info?symbol=BTCUSDT')
    assert.equal(stale.res.statusCode, 200)
    assert.deepEqual(stale.res.json().symbols, good.res.json().symbols)
    replay.faults.clear()
  })
})

describe('RedisCacheStore when Redis is down', () => {
  it('fails soft: misses, takes the lock, reports the error once and then skips Redis quickly', async () => {
    const port = await deadPort()
    const errors: unknown[] = []
    const store = new RedisCacheStore(`redis://127.0.0.1:${port}`, (error) => errors.push(error))
    try {
      assert.equal(await store.get('k'), undefined)
      assert.equal(errors.length, 1)
      const started = performance.now()
      await store.set('k', { status: 200, body: '[]', storedAt: 1 }, 1000)
      assert.equal(await store.lock('k', 1000), true)
      assert.equal(await store.get('k'), undefined)
      assert.ok(performance.now() - started < 50, 'no waiting on a Redis known to be down')
      assert.equal(errors.length, 1)
    } finally {
      await store.close()
    }
  })
})
