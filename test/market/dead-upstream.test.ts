import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setPlan } from '../../src/auth/plans.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { deadPort, timedGet } from './helpers.js'

interface OpenApi {
  paths: Record<string, Record<string, { tags?: string[]; parameters?: { in: string; name: string; required?: boolean; schema?: { enum?: unknown[] } }[] }>>
}

/** Every market-data operation of the OpenAPI document, as a valid request. */
function marketRequests(document: OpenApi): string[] {
  const urls: string[] = []
  for (const [path, operations] of Object.entries(document.paths)) {
    const get = operations.get
    if (!get?.tags?.some((tag) => tag.startsWith('market data'))) continue
    const required = (get.parameters ?? []).filter((p) => p.in === 'query' && p.required).map((p) => `${p.name}=${String(p.schema?.enum?.[0] ?? 'BTCUSDT')}`)
    const symbolQuery = path === '/v1/market/trades' ? ['symbol=BTCUSDT'] : [] // required, checked by the handler
    const query = path === '/v1/market/klines' ? 'symbol=BTCUSDT&interval=1h' : [...required, ...symbolQuery].join('&')
    urls.push(`${path.replace('{symbol}', 'BTCUSDT')}${query ? `?${query}` : ''}`)
  }
  return urls
}

describe('UPSTREAM_URL where nothing listens', () => {
  let t: TestApp
  before(async () => {
    const port = await deadPort()
    t = await startTestApp('pglite', { UPSTREAM_URL: `http://127.0.0.1:${port}` })
  })
  after(() => t.close())

  it('answers 502 within 3 s on every mirror, gateway and /v1/market endpoint', async () => {
    // The plan-gated K-lines need a data key of a Standard user; the other endpoints ignore it.
    const dataKey = await t.createKey(['market:read'], 'dead-upstream@example.test')
    await setPlan(t.database.handle.db, 'dead-upstream@example.test', 'standard', null, t.clock.now())
    const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApi
    const urls = marketRequests(document)
    assert.ok(urls.length >= 15, `only ${urls.length} market endpoints documented: ${urls.join(', ')}`)
    const timings: Record<string, number> = {}
    for (const url of urls) {
      const { res, ms } = await timedGet(t, url, url.startsWith('/v1/market/klines') ? { 'x-service-api-key': dataKey.api_key } : {})
      assert.equal(res.statusCode, 502, `${url}: ${res.body}`)
      const body = res.json() as { detail?: unknown; error?: { code?: unknown } }
      if (url.startsWith('/v1/')) assert.equal(body.error?.code, 'UPSTREAM_UNAVAILABLE', url)
      else assert.deepEqual(body, { detail: 'the upstream exchange cannot be reached' }, url)
      assert.ok(ms < 3000, `${url} took ${Math.round(ms)} ms`)
      timings[url] = Math.round(ms)
    }
    // Connection refused is immediate: three attempts with 50 + 150 ms between them.
    assert.ok(Math.max(...Object.values(timings)) < 1000, JSON.stringify(timings))
  })
})
