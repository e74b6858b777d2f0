import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { SCOPES } from '../../src/auth/scopes.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { type KeyPair, signedHeaders } from '../support/signing.js'
import { type OpenApiDocument, type Operation, operationsOf, type Probe, probesFor } from './openapi-probes.js'

/** The documented operations when this test was written; a walker that finds fewer is broken. */
const MIN_OPERATIONS = 11
const UNLIMITED = '1000000000'
const strategy = { name: 'keeper', template_id: 'sma_cross', params: { fast: 10 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' }

for (const backend of backends()) {
  describe(`every documented route refuses hostile input (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    let operations: Operation[]
    let probes: Probe[]

    before(async () => {
      // Budgets out of the way: hundreds of probes must each reach validation, not a 429.
      t = await startTestApp(backend, { RATE_LIMIT_WEIGHT_PER_MINUTE: UNLIMITED, RATE_LIMIT_IP_PER_MINUTE: UNLIMITED })
      key = await t.createKey([...SCOPES])
      // Path parameters name records that exist, so a probe that slipped through would change them.
      const kept = await t.app.inject({ method: 'POST', url: '/strategies', payload: { name: 'keeper', author: 'me' } })
      const signedKept = await t.signed(key, 'POST', '/v1/strategies', strategy)
      assert.equal(kept.statusCode, 200, kept.body)
      assert.equal(signedKept.statusCode, 200, signedKept.body)
      const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApiDocument
      operations = operationsOf(document)
      const pathValues = { integer: String(kept.json().id), string: signedKept.json().id as string }
      probes = operations.flatMap((operation) => probesFor(operation, pathValues))
    })
    after(() => t.close())

    it('walks every operation of the OpenAPI document', () => {
      assert.ok(operations.length >= MIN_OPERATIONS, `only ${operations.length} operations found`)
      for (const operation of operations) {
        assert.ok(
          probes.some((probe) => probe.operation === operation),
          `no probe for ${operation.method} ${operation.path}`,
        )
      }
      const withBody = operations.filter((o) => o.body)
      assert.ok(withBody.length >= 4, 'the document lost its request bodies')
    })

    it('answers each bad request with a 4xx in its route family’s error shape, and changes nothing', async () => {
      const before = await snapshot()
      assert.equal(before.open.length, 1)
      assert.equal(before.mine.length, 1)
      const failures: string[] = []
      for (const probe of probes) {
        const res = await send(probe)
        const problem = mismatch(probe, res)
        if (problem) failures.push(`${probe.label} → ${res.statusCode} ${res.body.slice(0, 200)}: ${problem}`)
      }
      assert.deepEqual(failures, [])
      assert.deepEqual(await snapshot(), before)
    })

    function send(probe: Probe): Promise<LightMyRequestResponse> {
      const { method } = probe.operation
      const headers: Record<string, string> = {}
      if (probe.payload !== undefined && probe.contentType) headers['content-type'] = probe.contentType
      if (probe.url.startsWith('/v1')) {
        t.clock.advance(1) // every signature must be fresh
        Object.assign(headers, signedHeaders(key, method, probe.url, probe.payload ?? '', t.clock.now()))
      }
      return t.app.inject({ method: method as 'GET', url: probe.url, payload: probe.payload, headers })
    }

    async function snapshot(): Promise<{ open: unknown[]; mine: unknown[] }> {
      const open = await t.app.inject({ method: 'GET', url: '/strategies' })
      const mine = await t.signed(key, 'GET', '/v1/strategies')
      return { open: open.json(), mine: mine.json().data }
    }
  })
}

for (const backend of backends()) {
  describe(`hostile input named in issue 12 (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    let strategyId: string
    const deep = '['.repeat(10_000) + ']'.repeat(10_000) // 20 kB
    const job = { template_id: 'sma_cross', params: { fast: 10, slow: 30 }, symbols: ['BTCUSDT'], timeframe: '1h', start: '2024-01-01T00:00:00Z', end: '2024-02-01T00:00:00Z', capital: '10000' }

    before(async () => {
      t = await startTestApp(backend, { RATE_LIMIT_WEIGHT_PER_MINUTE: UNLIMITED, RATE_LIMIT_IP_PER_MINUTE: UNLIMITED }, { queue: 'queue' })
      key = await t.createKey([...SCOPES])
      const created = await t.signed(key, 'POST', '/v1/strategies', strategy)
      assert.equal(created.statusCode, 200, created.body)
      strategyId = created.json().id
    })
    after(() => t.close())

    const withDeepSymbols = (body: object) => JSON.stringify({ ...body, symbols: 'MARK' }).replace('"MARK"', deep)

    it('answers 400 INVALID_PARAMETER naming symbols for 10,000 levels of nesting, and stores nothing', async () => {
      const before = await counts()
      for (const [method, url, body] of [
        ['POST', '/v1/strategies', withDeepSymbols(strategy)],
        ['PATCH', `/v1/strategies/${strategyId}`, withDeepSymbols({ name: 'renamed' })],
        ['POST', '/v1/backtest/jobs', withDeepSymbols(job)],
      ] as const) {
        const res = await t.signed(key, method, url, body)
        assert.equal(res.statusCode, 400, `${method} ${url}: ${res.body}`)
        assert.deepEqual(
          { code: res.json().error.code, field: res.json().error.field, message: res.json().error.message },
          { code: 'INVALID_PARAMETER', field: 'symbols', message: 'symbols: must not nest deeper than 32 levels' },
        )
      }
      const publicDeep = await t.app.inject({ method: 'POST', url: '/strategies', payload: `{"name":"deep","author":${deep}}`, headers: { 'content-type': 'application/json' } })
      assert.equal(publicDeep.statusCode, 422, publicDeep.body)
      assert.deepEqual(publicDeep.json().detail[0].loc, ['body', 'author'])
      assert.deepEqual(await counts(), before)
      assert.equal((await t.signed(key, 'GET', `/v1/strategies/${strategyId}`)).json().name, strategy.name)
    })

    it('refuses invalid UTF-8 (400 on /v1, 422 on public routes) and a declared non-UTF-8 charset (415), storing nothing', async () => {
      const before = await counts()
      const invalid = (json: string) => Buffer.from(json.replace('NAME', '\xff\xfe'), 'latin1')
      const signedBad = await t.signed(key, 'POST', '/v1/strategies', invalid(JSON.stringify({ ...strategy, name: 'NAME' })))
      assert.equal(signedBad.statusCode, 400, signedBad.body)
      assert.equal(signedBad.json().error.code, 'INVALID_PARAMETER')
      assert.match(signedBad.json().error.message, /not valid UTF-8/)
      const publicBad = await t.app.inject({ method: 'POST', url: '/strategies', payload: invalid('{"name":"NAME","author":"me"}'), headers: { 'content-type': 'application/json' } })
      assert.equal(publicBad.statusCode, 422, publicBad.body)
      assert.deepEqual(publicBad.json().detail, [{ type: 'value_error', loc: ['body'], msg: 'request body is not valid UTF-8' }])
      // café in latin1 is valid JSON text whose é is not UTF-8; charset=utf-8 (any case) stays accepted.
      const latin1 = Buffer.from('{"name":"caf\xe9","author":"me"}', 'latin1')
      const declared = await t.app.inject({ method: 'POST', url: '/strategies', payload: latin1, headers: { 'content-type': 'application/json; charset=ISO-8859-1' } })
      assert.equal(declared.statusCode, 415, declared.body)
      assert.deepEqual(declared.json(), { detail: 'request body must be UTF-8 JSON; charset=iso-8859-1 is not accepted' })
      const signedDeclared = await t.signed(key, 'POST', '/v1/strategies', JSON.stringify(strategy), { 'content-type': 'application/json;charset=latin1' })
      assert.equal(signedDeclared.statusCode, 415, signedDeclared.body)
      assert.equal(signedDeclared.json().error.code, 'UNSUPPORTED_MEDIA_TYPE')
      assert.deepEqual(await counts(), before)
      const utf8 = await t.app.inject({ method: 'POST', url: '/strategies', payload: Buffer.from('{"name":"café","author":"me"}'), headers: { 'content-type': 'application/json; charset="UTF-8"' } })
      assert.equal(utf8.statusCode, 200, utf8.body)
      assert.equal(utf8.json().name, 'café')
    })

    it('refuses a webhook URL on port 0 at create and update (400 naming url)', async () => {
      const res = await t.signed(key, 'POST', '/v1/webhooks', { url: 'https://example.com:0/hook', events: ['*'] })
      assert.equal(res.statusCode, 400, res.body)
      assert.equal(res.json().error.field, 'url')
      assert.match(res.json().error.message, /port must be between 1 and 65535/)
      const countWebhooks = async () => (await t.signed(key, 'GET', '/v1/webhooks')).json().data.length
      assert.equal(await countWebhooks(), 0)
      const created = await t.signed(key, 'POST', '/v1/webhooks', { url: 'https://8.8.8.8/hook', events: ['*'] })
      assert.equal(created.statusCode, 200, created.body)
      const patched = await t.signed(key, 'PATCH', `/v1/webhooks/${created.json().id}`, { url: 'https://8.8.8.8:00/hook' })
      assert.equal(patched.statusCode, 400, patched.body)
      assert.equal(patched.json().error.field, 'url')
      assert.equal((await t.signed(key, 'GET', `/v1/webhooks/${created.json().id}`)).json().url, 'https://8.8.8.8/hook')
    })

    async function counts(): Promise<Record<string, number>> {
      const db = t.database.handle.db
      const count = async (table: 'strategies' | 'public_strategies' | 'backtest_jobs') =>
        Number((await db.selectFrom(table).select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
      return { strategies: await count('strategies'), public: await count('public_strategies'), jobs: await count('backtest_jobs') }
    }
  })
}

/** Why a response is not the refusal the probe expects; undefined when it is. */
function mismatch(probe: Probe, res: LightMyRequestResponse): string | undefined {
  if (probe.refusal.kind === 'ignored' && res.statusCode < 400) return undefined
  if (res.statusCode < 400 || res.statusCode >= 500) return 'not a 4xx'
  let body: unknown
  try {
    body = res.json()
  } catch {
    return 'body is not JSON'
  }
  return probe.url.startsWith('/v1') ? envelopeMismatch(probe, res, body) : fastApiMismatch(probe, res, body)
}

const EXPECTED_V1: Record<Probe['refusal']['kind'], [number, string][]> = {
  validation: [[400, 'INVALID_PARAMETER']],
  'too-large': [[413, 'PAYLOAD_TOO_LARGE']],
  'media-type': [[415, 'UNSUPPORTED_MEDIA_TYPE']],
  path: [
    [404, 'NOT_FOUND'],
    [400, 'INVALID_PARAMETER'],
    [414, 'INVALID_PARAMETER'],
  ],
  ignored: [[400, 'INVALID_PARAMETER']],
}

function envelopeMismatch(probe: Probe, res: LightMyRequestResponse, body: unknown): string | undefined {
  const error = (body as { error?: { code?: unknown; message?: unknown; request_id?: unknown; field?: unknown } }).error
  if (!error || typeof error.code !== 'string' || typeof error.message !== 'string' || error.message === '') return 'not the /v1 envelope'
  if (error.request_id !== res.headers['x-request-id']) return 'request_id differs from x-request-id'
  const allowed = EXPECTED_V1[probe.refusal.kind]
  if (!allowed.some(([status, code]) => status === res.statusCode && code === error.code)) return `expected ${JSON.stringify(allowed)}`
  const { refusal } = probe
  if (refusal.kind === 'validation' && refusal.field && !namesField(String(error.field), refusal.field)) {
    return `field is not ${refusal.field}`
  }
  return undefined
}

const EXPECTED_PUBLIC_STATUS: Record<Probe['refusal']['kind'], number[]> = {
  validation: [422],
  'too-large': [413],
  'media-type': [415],
  path: [404, 422, 400, 414],
  ignored: [422],
}

function fastApiMismatch(probe: Probe, res: LightMyRequestResponse, body: unknown): string | undefined {
  const allowed = EXPECTED_PUBLIC_STATUS[probe.refusal.kind]
  if (!allowed.includes(res.statusCode)) return `expected ${allowed.join(' or ')}`
  const detail = (body as { detail?: unknown }).detail
  if (res.statusCode !== 422) return typeof detail === 'string' && detail !== '' ? undefined : 'not {"detail": "…"}'
  const items = Array.isArray(detail) ? (detail as { loc?: unknown; msg?: unknown; type?: unknown }[]) : []
  const wellFormed = (item: (typeof items)[number]) =>
    Array.isArray(item.loc) &&
    ['body', 'query', 'path'].includes(item.loc[0]) &&
    typeof item.msg === 'string' &&
    typeof item.type === 'string'
  if (items.length === 0 || !items.every(wellFormed)) return 'not {"detail": [{loc, msg, type}]}'
  const { refusal } = probe
  if (refusal.kind === 'validation' && refusal.field) {
    const locs = items.map((item) => (item.loc as unknown[]).slice(1).join('.'))
    if (!locs.some((loc) => namesField(loc, refusal.field!))) return `no item locates ${refusal.field}`
  }
  return undefined
}

function namesField(reported: string, field: string): boolean {
  return reported === field || reported.startsWith(`${field}.`)
}
