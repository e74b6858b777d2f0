import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'

const value = (body: string, line: string) => Number(body.split('\n').find((l) => l.startsWith(`${line} `))?.slice(line.length + 1) ?? 0)
const TOKEN = 'metrics-token-for-tests'
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
/** The routes registered when this test was written; fewer means the route list parser broke. */
const MIN_ROUTES = 11

interface OpenApiOperation {
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>
}

for (const backend of backends()) {
  describe(`ops endpoints (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend, { METRICS_TOKEN: TOKEN })
    })
    after(() => t.close())
    const scrape = (authorization = `Bearer ${TOKEN}`) => t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization } })

    it('/healthz answers 200', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/healthz' })
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), { status: 'ok' })
    })

    it('/readyz answers 200 while the database answers', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/readyz' })
      assert.equal(res.statusCode, 200)
      assert.deepEqual(res.json(), { status: 'ready', reasons: [] })
    })

    it('/readyz answers 503 saying so while the node drains, and /healthz stays 200', async () => {
      t.services.drain.setDraining(true)
      try {
        const res = await t.app.inject({ method: 'GET', url: '/readyz' })
        assert.equal(res.statusCode, 503)
        const body = res.json() as { status: string; reasons: string[]; message: string }
        assert.deepEqual([body.status, body.reasons], ['not ready', ['draining']])
        assert.match(body.message, /stopping/)
        assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
      } finally {
        t.services.drain.setDraining(false)
      }
      assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200)
    })

    it('/readyz answers 503 migrations_pending while the database lacks a migration this version knows', async () => {
      const db = t.database.handle.db
      const last = await sql<{ name: string; timestamp: string }>`delete from kysely_migration where name = (select max(name) from kysely_migration) returning name, timestamp`.execute(db)
      try {
        const res = await t.app.inject({ method: 'GET', url: '/readyz' })
        assert.equal(res.statusCode, 503)
        assert.deepEqual((res.json() as { reasons: string[] }).reasons, ['migrations_pending'])
      } finally {
        const row = last.rows[0]!
        await sql`insert into kysely_migration (name, timestamp) values (${row.name}, ${row.timestamp})`.execute(db)
      }
      assert.equal((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200)
    })

    it('/metrics is Prometheus text counting requests by route pattern, never by raw URL', async () => {
      // The process registry outlives an app: the other backend's apps in this process counted too.
      const series = 'perpetua_http_requests_total{method="GET",route="/strategies/:strategy_id",status="404"}'
      const before = value((await scrape()).body, series)
      for (let i = 0; i < 2; i++) assert.equal((await t.app.inject({ method: 'GET', url: '/strategies/424242' })).statusCode, 404)
      const res = await scrape()
      assert.equal(res.statusCode, 200)
      assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4/)
      assert.match(res.body, /^# TYPE perpetua_http_requests_total counter$/m)
      const lines = res.body.split('\n').filter((l) => l.startsWith('perpetua_http_requests_total{'))
      const line = lines.find((l) => l.includes('route="/strategies/:strategy_id"'))
      assert.ok(line, res.body)
      assert.match(line, /method="GET"/)
      assert.equal(value(res.body, series) - before, 2)
      assert.doesNotMatch(res.body, /424242/)
    })

    it('/metrics counts unmatched requests once and keeps a cumulative latency histogram per route', async () => {
      const before = (await scrape()).body
      for (let i = 0; i < 3; i++) assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
      assert.equal((await t.app.inject({ method: 'GET', url: '/no-such-route-zqxj' })).statusCode, 404)
      assert.equal((await t.app.inject({ method: 'GET', url: '/v1/no-such-route-zqxj' })).statusCode, 404)
      const after = (await scrape()).body

      const healthz = 'perpetua_http_requests_total{method="GET",route="/healthz",status="200"}'
      assert.equal(value(after, healthz) - value(before, healthz), 3)
      const unmatched = 'perpetua_http_requests_total{method="GET",route="unmatched",status="404"}'
      assert.equal(value(after, unmatched) - value(before, unmatched), 2)
      assert.doesNotMatch(after, /zqxj/)

      const labels = 'method="GET",route="/healthz"'
      const count = value(after, `perpetua_http_request_duration_seconds_count{${labels}}`)
      assert.equal(count - value(before, `perpetua_http_request_duration_seconds_count{${labels}}`), 3)
      const buckets = after.split('\n').filter((l) => l.startsWith(`perpetua_http_request_duration_seconds_bucket{${labels},`))
      assert.equal(buckets.length, 12) // 11 bounds and +Inf
      const counts = buckets.map((l) => Number(l.split(' ')[1]))
      assert.deepEqual(counts, [...counts].sort((a, b) => a - b), 'buckets are cumulative')
      assert.match(buckets.at(-1)!, /le="\+Inf"\} \d+$/)
      assert.equal(counts.at(-1), count)
      assert.ok(value(after, `perpetua_http_request_duration_seconds_sum{${labels}}`) > 0)
    })

    it('/metrics on the API port answers only to the METRICS_TOKEN bearer (401 otherwise)', async () => {
      for (const authorization of [undefined, 'Bearer wrong-token', `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, TOKEN]) {
        const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } })
        assert.equal(res.statusCode, 401, `for ${authorization}`)
        assert.doesNotMatch(res.body, /perpetua_/)
        assert.equal(res.headers['www-authenticate'], 'Bearer')
      }
      assert.equal((await scrape(`bearer ${TOKEN}`)).statusCode, 200, 'the scheme is case-insensitive (RFC 7235)')
    })

    it('/openapi.json is OpenAPI 3, documents every registered route and a success schema for each', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/openapi.json' })
      assert.equal(res.statusCode, 200)
      const document = res.json() as { openapi: string; paths: Record<string, Record<string, OpenApiOperation>> }
      assert.match(document.openapi, /^3\.\d+\.\d+$/)
      const documented = Object.entries(document.paths).flatMap(([path, operations]) =>
        Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
      )
      const registered = registeredRoutes(t.app)
        .filter((route) => !/^HEAD |^\w+ \/(docs|openapi\.json|app)\b|^GET \/$/.test(route)) // not API: the docs, the document, the dashboard
        .map((route) => route.replace(/:(\w+)/g, '{$1}'))
      assert.ok(registered.length >= MIN_ROUTES, `only ${registered.length} routes found`)
      assert.deepEqual(documented.sort(), registered.sort())
      for (const [path, operations] of Object.entries(document.paths)) {
        for (const [method, operation] of Object.entries(operations)) {
          // 201: POST /v1/templates, the one create that answers 201; 202: POST /v1/backtest/sweeps (issue 23; docs/decisions/sweeps.md).
          const success = ['200', '201', '202'].some((status) => Object.values(operation.responses[status]?.content ?? {}).some((content) => content.schema))
          assert.ok(success || operation.responses['204'], `${method.toUpperCase()} ${path} documents no 200, 201 or 202 schema, nor 204`)
        }
      }
    })

    it('/docs serves the Swagger UI', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/docs' })
      assert.equal(res.statusCode, 200)
      assert.match(String(res.headers['content-type']), /^text\/html/)
      assert.match(res.body, /<title>Swagger UI<\/title>/)
    })

    it('echoes a safe x-request-id, in the header and the error body', async () => {
      const id = 'trace-42.abc:def_0'
      const res = await t.app.inject({ method: 'GET', url: '/v1/nope', headers: { 'x-request-id': id } })
      assert.equal(res.headers['x-request-id'], id)
      assert.equal(res.json().error.request_id, id)
    })

    it('replaces a missing or unsafe x-request-id with a fresh uuid', async () => {
      const seen = new Set<string>()
      for (const sent of [undefined, 'has spaces', '<script>', 'x'.repeat(129), '']) {
        const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: sent === undefined ? {} : { 'x-request-id': sent } })
        const echoed = String(res.headers['x-request-id'])
        assert.match(echoed, UUID, `for ${JSON.stringify(sent)}`)
        seen.add(echoed)
      }
      assert.equal(seen.size, 5)
    })

    it('answers an unknown path in the shape of its family', async () => {
      const versioned = await t.app.inject({ method: 'GET', url: '/v1/nope' })
      assert.equal(versioned.statusCode, 404)
      const { error } = versioned.json()
      assert.equal(error.code, 'NOT_FOUND')
      assert.equal(typeof error.message, 'string')
      assert.equal(error.request_id, versioned.headers['x-request-id'])
      const open = await t.app.inject({ method: 'GET', url: '/nope' })
      assert.equal(open.statusCode, 404)
      assert.deepEqual(open.json(), { detail: 'Not Found' })
    })
  })

  describe(`/metrics without METRICS_TOKEN (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend)
    })
    after(() => t.close())

    it('is not served on the API port: 404 with or without credentials', async () => {
      for (const headers of [{}, { authorization: 'Bearer anything' }]) {
        const res = await t.app.inject({ method: 'GET', url: '/metrics', headers })
        assert.equal(res.statusCode, 404)
        assert.doesNotMatch(res.body, /perpetua_/)
      }
    })
  })

  describe(`readiness without a database (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend)
      await t.database.handle.close()
    })
    after(() => t.close())

    it('/readyz answers 503 while /healthz still answers 200', async () => {
      const ready = await t.app.inject({ method: 'GET', url: '/readyz' })
      assert.equal(ready.statusCode, 503)
      const body = ready.json() as { status: string; reasons: string[]; message: string }
      assert.deepEqual([body.status, body.reasons], ['not ready', ['database_unavailable']])
      assert.match(body.message, /database does not answer/)
      assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200)
    })
  })

  describe(`per-IP budget on public routes (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend, { RATE_LIMIT_IP_PER_MINUTE: '3' })
    })
    after(() => t.close())

    it('answers the 4th public request of a minute with 429 and Retry-After, per IP', async () => {
      // Start at the beginning of a window so the requests cannot straddle two.
      t.clock.value = Math.ceil(t.clock.value / 60_000) * 60_000 + 1000
      const get = (remoteAddress = '127.0.0.1') => t.app.inject({ method: 'GET', url: '/strategies', remoteAddress })
      for (const remaining of [2, 1, 0]) {
        const res = await get()
        assert.equal(res.statusCode, 200)
        assert.match(String(res.headers.ratelimit), new RegExp(`r=${remaining};`))
      }
      const limited = await get()
      assert.equal(limited.statusCode, 429)
      assert.equal(limited.headers['retry-after'], '59')
      assert.equal(typeof limited.json().detail, 'string')
      assert.equal((await get('127.0.0.2')).statusCode, 200, 'another IP has its own budget')
      assert.equal((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200, 'ops routes are not budgeted')
      t.clock.advance(60_000)
      assert.equal((await get()).statusCode, 200, 'the next window starts afresh')
    })
  })
}

/**
 * "METHOD /url" for every route the app registered. Fastify has no route list, and the routes are
 * registered inside buildApp before a test could add an onRoute hook, so this reads printRoutes' tree:
 * each level indents by four characters and a node's URL is its ancestors' segments joined.
 */
function registeredRoutes(app: FastifyInstance): string[] {
  const routes: string[] = []
  const segments: string[] = []
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line)
    if (!match) continue
    segments.length = match[1]!.length / 4
    segments.push(match[2]!)
    for (const method of match[3]?.split(', ') ?? []) routes.push(`${method} ${segments.join('')}`)
  }
  return routes
}
