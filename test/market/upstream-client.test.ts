import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { MarketData } from '../../src/market/market-data.js'
import { ResponseCache } from '../../src/market/response-cache.js'
import { UpstreamClient, type UpstreamClientOptions } from '../../src/market/upstream-client.js'
import { upstream } from '../../src/market/upstream-requests.js'
import { startReplay, TestClock, type ReplayExchange } from '../support/app.js'

// These tests are about budgets, not speed: a deadline and response time-out far beyond what a busy
// machine needs (a fresh replay exchange computes its first 24h tickers over every symbol).
const soon = () => performance.now() + 20_000
const tickers = { host: 'api' as const, path: '/fapi/v1/ticker/24hr', query: '', weight: 40 }
const exchangeInfo = { host: 'api' as const, path: '/fapi/v1/exchangeInfo', query: '', weight: 1 }

/** A replay exchange and a client sharing one clock, so both count weight in the same minute. */
async function pair(options: Partial<UpstreamClientOptions>) {
  const clock = new TestClock(Math.floor(Date.now() / 60_000) * 60_000 + 1_000)
  const replay = await startReplay({ now: clock.now })
  const client = new UpstreamClient({ apiUrl: replay.url, dataUrl: replay.url, now: clock.now, margin: 0, responseTimeoutMs: 20_000, ...options })
  return {
    clock,
    replay,
    client,
    async close() {
      await client.close()
      await replay.close()
    },
  }
}

describe('UpstreamClient against the replay exchange', () => {
  it('tracks X-MBX-USED-WEIGHT-1M and stops before its ceiling without calling', async () => {
    const { clock, replay, client, close } = await pair({ weightLimit: 100 })
    try {
      assert.equal((await client.get(tickers, soon())).status, 200)
      assert.equal((await client.get(tickers, soon())).status, 200)
      const calls = replay.stats().requests
      await assert.rejects(client.get(tickers, soon()), (error: Error & { code?: string; headers?: Record<string, string> }) => {
        assert.equal(error.code, 'UPSTREAM_UNAVAILABLE')
        assert.match(error.message, /budget/)
        assert.equal(error.headers?.['retry-after'], '59')
        return true
      })
      assert.equal(replay.stats().requests, calls, 'refused without calling')
      assert.equal((await client.get(exchangeInfo, soon())).status, 200, 'a lighter call still fits')
      clock.advance(60_000)
      assert.equal((await client.get(tickers, soon())).status, 200, 'the next minute has room again')
    } finally {
      await close()
    }
  })

  it('refreshes an answer held only while 15% of the limit stays free for calls without one', async () => {
    const { client, close } = await pair({ weightLimit: 100 })
    try {
      const premium = { host: 'api' as const, path: '/fapi/v1/premiumIndex', query: '', weight: 10 }
      assert.equal((await client.get(tickers, soon(), true)).status, 200)
      assert.equal((await client.get(tickers, soon(), true)).status, 200) // 80 used
      await assert.rejects(client.get(premium, soon(), true), /budget/, '90 is past the refresh ceiling of 85')
      assert.equal((await client.get(premium, soon(), false)).status, 200, 'but not past 100')
    } finally {
      await close()
    }
  })

  it('keeps the default 10% margin below 2400', async () => {
    const { client, close } = await pair({ margin: undefined })
    try {
      // 54 × 40 = 2160, the ceiling: the 55th call is refused.
      for (let i = 0; i < 54; i++) assert.equal((await client.get(tickers, soon())).status, 200, `call ${i + 1}`)
      await assert.rejects(client.get(tickers, soon()), /budget/)
    } finally {
      await close()
    }
  })

  it('keeps the /futures/data request budget apart from the weight', async () => {
    const { clock, client, close } = await pair({ dataRequestLimit: 3 })
    const series = { host: 'data' as const, path: '/futures/data/openInterestHist', query: 'symbol=BTCUSDT&period=5m&limit=1', weight: 0 }
    try {
      for (let i = 0; i < 3; i++) assert.equal((await client.get(series, soon())).status, 200)
      await assert.rejects(client.get(series, soon()), /futures-data/)
      assert.equal((await client.get(tickers, soon())).status, 200, 'the weight budget is untouched')
      clock.advance(5 * 60_000)
      assert.equal((await client.get(series, soon())).status, 200)
    } finally {
      await close()
    }
  })

  it('serves the cached answer when the budget is spent, and a 502 when there is none', async () => {
    const { clock, replay, client, close } = await pair({ weightLimit: 15 })
    const market = new MarketData(client, new ResponseCache(clock.now, undefined))
    try {
      const fresh = await market.session().fetch(upstream.premiumIndex()) // weight 10
      assert.equal(fresh.status, 200)
      const calls = replay.stats().requests
      await assert.rejects(async () => market.session().fetch(upstream.tickers()), { code: 'UPSTREAM_UNAVAILABLE' })
      clock.advance(6_000) // past the 5 s TTL, same minute
      const stale = await market.session().fetch(upstream.premiumIndex())
      assert.equal(stale, fresh, 'the kept answer')
      assert.equal(replay.stats().requests, calls, 'no call made')
    } finally {
      await close()
    }
  })

  describe('two upstream URLs', () => {
    let api: ReplayExchange
    let data: ReplayExchange
    before(async () => {
      ;[api, data] = await Promise.all([startReplay(), startReplay()])
    })
    after(async () => {
      await Promise.all([api.close(), data.close()])
    })

    it('sends /futures/data to UPSTREAM_DATA_URL and /fapi to UPSTREAM_URL', async () => {
      const client = new UpstreamClient({ apiUrl: api.url, dataUrl: data.url, now: Date.now })
      try {
        await client.get({ host: 'data', path: '/futures/data/openInterestHist', query: 'symbol=BTCUSDT&period=5m&limit=1', weight: 0 }, soon())
        await client.get(exchangeInfo, soon())
        assert.deepEqual(data.stats().byPath, { '/futures/data/openInterestHist': 1 })
        assert.deepEqual(api.stats().byPath, { '/fapi/v1/exchangeInfo': 1 })
        assert.equal(client.baseUrl('data'), data.url)
      } finally {
        await client.close()
      }
    })
  })
})
