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
