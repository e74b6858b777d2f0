import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import { enumMessage, oneOfMessage, quoted, readableIssues, type SchemaIssue, valueAt } from '../../src/http/schema-issues.js'

/** The validator's own issues for `value`, as Fastify hands them to the error handler. */
function issuesOf(schema: ReturnType<typeof Type.Object>, value: unknown): SchemaIssue[] {
  const validate = TypeBoxValidatorCompiler({ schema, httpPart: 'body' } as never) as unknown as (v: unknown) => { error?: SchemaIssue[] }
  return validate(value).error ?? []
}

describe('readable schema issues', () => {
  const schema = Type.Object({
    side: Type.Union([Type.Literal('BUY'), Type.Literal('SELL')]),
    tif: Type.Optional(Type.Union([Type.Literal('GTC'), Type.Literal('IOC'), Type.Null()])),
    note: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    limits: Type.Optional(Type.Union([Type.Object({ max: Type.Integer() }), Type.Null()])),
  })

  it('folds a union of constants (three issues from the validator) into one naming the allowed values', () => {
    const raw = issuesOf(schema, { side: 'buy' })
    assert.equal(raw.length, 3)
    const [only, ...rest] = readableIssues(raw)
    assert.deepEqual(rest, [])
    assert.equal(only!.keyword, 'enum')
    assert.equal(only!.instancePath, '/side')
    assert.equal(enumMessage(only!.params.allowedValues as unknown[]), "Input should be 'BUY' or 'SELL'")
    const tif = readableIssues(issuesOf(schema, { side: 'BUY', tif: 'FOK' }))
    assert.equal(enumMessage(tif[0]!.params.allowedValues as unknown[]), "Input should be 'GTC', 'IOC' or null")
    // The API's own wording, in /v1 messages: the set plain, the value quoted back.
    assert.equal(oneOfMessage(tif[0]!.params.allowedValues as unknown[], quoted('FOK')), 'must be one of GTC, IOC, null; got "FOK"')
    assert.equal(oneOfMessage(['1m', '5m']), 'must be one of 1m, 5m')
  })

  it('folds a union of types into one type issue, and keeps a deeper failure of the matching alternative', () => {
    const note = readableIssues(issuesOf(schema, { side: 'BUY', note: 3 }))
    assert.deepEqual(note.map((i) => [i.keyword, i.instancePath, i.params.type]), [['type', '/note', 'string or null']])
    const limits = readableIssues(issuesOf(schema, { side: 'BUY', limits: { max: 'x' } }))
    assert.ok(limits.some((i) => i.instancePath === '/limits/max'), JSON.stringify(limits))
    assert.ok(!limits.some((i) => i.keyword === 'anyOf'))
  })

  it('reads the refused value by JSON pointer and quotes only short scalars', () => {
    assert.equal(valueAt({ a: { 'b/c': ['x', 'y'] } }, '/a/b~1c/1'), 'y')
    assert.equal(valueAt({ a: 1 }, '/a/b'), undefined)
    assert.equal(valueAt({}, '/__proto__'), undefined)
    assert.equal(quoted('buy'), '"buy"')
    assert.equal(quoted(7), '7')
    assert.equal(quoted({ k: 1 }), undefined)
    assert.equal(quoted('x'.repeat(50)), `"${'x'.repeat(40)}"…`)
  })
})
