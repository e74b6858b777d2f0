import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { after, before, describe, it } from 'node:test'
import { buildDashboard } from '../../web/build.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { tempDir } from '../support/database.js'

describe('the dashboard routes', () => {
  let t: TestApp
  let unbuilt: TestApp
  let files: string[]
  before(async () => {
    const dir = tempDir('web')
    files = await buildDashboard(dir)
    t = await startTestApp('pglite', {}, { config: { dashboardDir: dir } })
    unbuilt = await startTestApp('pglite', {}, { config: { dashboardDir: tempDir('empty') } })
  })
  after(async () => {
    await t.close()
    await unbuilt.close()
  })

  it('redirects / and /app to /app/', async () => {
    const root = await t.app.inject({ method: 'GET', url: '/' })
    assert.equal(root.statusCode, 302)
    assert.equal(root.headers.location, '/app/')
    const bare = await t.app.inject({ method: 'GET', url: '/app' })
    assert.equal(bare.statusCode, 301)
    assert.equal(bare.headers.location, '/app/')
  })

  it('answers index.html at every page path, uncached, with a policy that allows nothing from elsewhere', async () => {
    for (const url of ['/app/', '/app/backtests/bt_1234abcd', '/app/strategies/strat_1234abcd?x=1']) {
      const res = await t.app.inject({ method: 'GET', url })
      assert.equal(res.statusCode, 200, url)
      assert.match(String(res.headers['content-type']), /^text\/html/)
      assert.equal(res.headers['cache-control'], 'no-cache')
      const csp = String(res.headers['content-security-policy'])
      assert.match(csp, /default-src 'self'/)
      assert.match(csp, /frame-ancestors 'none'/)
      assert.doesNotMatch(csp, /script-src[^;]*unsafe/, 'no inline or eval scripts')
      assert.match(res.body, /<script type="module" src="\/app\/assets\/app-[A-Z0-9]+\.js"><\/script>/)
    }
  })

  it('serves the hashed assets for a year, gzipped when the client accepts it, and 404 for an unknown one', async () => {
    const script = files.find((f) => f.endsWith('.js'))!
    const plain = await t.app.inject({ method: 'GET', url: `/app/${script}` })
    assert.equal(plain.statusCode, 200)
    assert.match(String(plain.headers['content-type']), /^text\/javascript/)
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable')
    assert.equal(plain.headers['content-encoding'], undefined)
    const gzipped = await t.app.inject({ method: 'GET', url: `/app/${script}`, headers: { 'accept-encoding': 'gzip, br' } })
    assert.equal(gzipped.headers['content-encoding'], 'gzip')
    assert.ok(gzipped.rawPayload.length < plain.rawPayload.length / 2)
    assert.deepEqual(zlib.gunzipSync(gzipped.rawPayload), plain.rawPayload)
    const missing = await t.app.inject({ method: 'GET', url: '/app/assets/app-NOPE.js' })
    assert.equal(missing.statusCode, 404)
  })

  it('says how to build it when the folder holds no build', async () => {
    const res = await unbuilt.app.inject({ method: 'GET', url: '/app/' })
    assert.equal(res.statusCode, 503)
    assert.match(res.body, /npm run build/)
  })

  it('loads nothing from another origin: every src and href of the page is below /app/', () => {
    const html = fs.readFileSync(path.join(t.services.config.dashboardDir!, 'index.html'), 'utf8')
    for (const match of html.matchAll(/(?:src|href)="([^"]+)"/g)) assert.ok(match[1]!.startsWith('/app/') || match[1]!.startsWith('data:'), match[1])
  })

  it('keeps the dashboard out of the API description', async () => {
    const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> }
    assert.deepEqual(Object.keys(doc.paths).filter((p) => p === '/' || p.startsWith('/app')), [])
  })
})
