import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core'
import { startTestApp, type TestApp } from '../support/app.js'

interface Document {
  openapi: string
  servers?: unknown[]
  paths: Record<string, Record<string, { operationId?: string; tags?: string[]; security?: unknown[]; responses: Record<string, { content?: Record<string, { schema?: { $ref?: string } }> }> }>>
}

/** The document as a client sees it, checked by a standard linter and against what generators need. */
describe('the OpenAPI document', () => {
  let t: TestApp
  let text: string
  let document: Document

  before(async () => {
    t = await startTestApp('pglite')
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' })
    assert.equal(res.statusCode, 200)
    text = res.body
    document = res.json() as Document
  })
  after(() => t.close())

  it("has no error under Redocly's recommended rules", async () => {
    const config = await createConfig({ extends: ['recommended'] })
    const problems = await lintFromString({ source: text, absoluteRef: 'openapi.json', config })
    const errors = problems.filter((problem) => problem.severity === 'error').map(describeProblem)
    assert.deepEqual(errors, [])
    // Warnings are allowed but counted: the three operational routes without a 4xx and the licence.
    const warnings = problems.filter((problem) => problem.severity === 'warn')
    assert.ok(warnings.length <= 4, `warnings grew: ${warnings.map(describeProblem).join('\n')}`)
  })

  it('gives every operation a unique operationId, tags and security', () => {
    const ids = new Set<string>()
    for (const [path, methods] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(methods)) {
        const where = `${method.toUpperCase()} ${path}`
        assert.match(operation.operationId ?? '', /^[a-z][A-Za-z0-9]+$/, where)
        assert.ok(!ids.has(operation.operationId!), `${where}: operationId ${operation.operationId} is used twice`)
        ids.add(operation.operationId!)
        assert.ok((operation.tags ?? []).length > 0, `${where} has no tag`)
        assert.ok(Array.isArray(operation.security), `${where} declares no security`)
      }
    }
    assert.equal(document.paths['/v1/backtest/jobs/{id}']?.get?.operationId, 'getV1BacktestJobsById')
    assert.equal(document.paths['/v1/strategies/{id}/deploy']?.post?.operationId, 'postV1StrategiesByIdDeploy')
  })

  it('declares the signed headers or Bearer on /v1, nothing on public routes', () => {
    const signed = [{ apiKey: [], timestamp: [], signature: [] }, { bearer: [] }]
    assert.deepEqual(document.paths['/v1/backtest/jobs']?.post?.security, signed)
    assert.deepEqual(document.paths['/v1/market/trades']?.get?.security, [{}, ...signed])
    assert.deepEqual(document.paths['/funding/rates']?.get?.security, [])
    assert.ok((document.servers ?? []).length > 0)
  })

  it("describes every /v1 error answer with the shared envelope, including the spec's per-endpoint codes", () => {
    const expected: Record<string, string[]> = {
      'post /v1/strategies/{id}/deploy': ['400', '401', '402', '403', '404', '409', '429'],
      'post /v1/strategies/{id}/pause': ['400', '401', '403', '404', '409', '429'],
      'post /v1/backtest/jobs': ['400', '401', '403', '409', '429'],
      'get /v1/backtest/jobs': ['400', '401', '403', '429'],
      'post /v1/backtest/jobs/{id}/cancel': ['401', '404', '409', '429'],
      'post /v1/webhooks': ['400', '401', '403', '409', '429'],
      'post /v1/webhooks/{id}/test': ['401', '403', '404', '409', '429'],
      'get /v1/market/exchange-info': ['400', '401', '429'],
    }
    for (const [key, statuses] of Object.entries(expected)) {
      const [method, path] = key.split(' ') as [string, string]
      const responses = document.paths[path]?.[method]?.responses ?? {}
      for (const status of statuses) assert.ok(responses[status], `${key} does not describe ${status}`)
    }
    for (const [path, methods] of Object.entries(document.paths)) {
      if (!path.startsWith('/v1/')) continue
      for (const [method, operation] of Object.entries(methods)) {
        for (const [status, response] of Object.entries(operation.responses)) {
          if (Number(status) < 400) continue
          const schema = response.content?.['application/json']?.schema
          assert.equal(schema?.$ref, '#/components/schemas/ErrorEnvelope', `${method} ${path} ${status}`)
        }
      }
    }
  })
})

function describeProblem(problem: NormalizedProblem): string {
  return `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer ?? '?'}`
}
