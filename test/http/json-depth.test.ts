import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_JSON_DEPTH, tooDeepMember } from '../../src/http/json-depth.js'

const depth = (n: number, inner = '') => '['.repeat(n) + inner + ']'.repeat(n)
const scan = (text: string) => tooDeepMember(Buffer.from(text))

describe('tooDeepMember', () => {
  it('allows exactly MAX_JSON_DEPTH levels and refuses one more', () => {
    assert.equal(scan(depth(MAX_JSON_DEPTH)), undefined)
    assert.equal(scan(depth(MAX_JSON_DEPTH + 1)), '')
    assert.equal(scan(`{"a":${depth(MAX_JSON_DEPTH - 1)}}`), undefined)
    assert.equal(scan(`{"a":${depth(MAX_JSON_DEPTH)}}`), '/a')
  })

  it('names the top-level member the nesting is in, whatever came before it', () => {
    const text = `{"name":"x","params":{"k":[1,{"q":"]]]"}]},"sym/b~s":${depth(40)},"after":1}`
    assert.equal(scan(text), '/sym~1b~0s')
    assert.equal(scan(`{"a\\"b":${depth(40)}}`), '/a"b')
    assert.equal(scan(`{"é":${depth(40)}}`), '/é')
  })

  it('does not count brackets inside strings, escaped quotes included', () => {
    assert.equal(scan(JSON.stringify({ a: '['.repeat(1000), b: '\\"[[[[', c: ['"{{{{'] })), undefined)
    assert.equal(scan(`["\\\\", ${depth(40)}]`), '')
  })

  it('reads a shallow 1 MB body to its end in a few milliseconds', () => {
    const body = Buffer.from(`[${'[{"k":"v\\"]"}],'.repeat(70_000)}1]`)
    assert.ok(body.length > 1_000_000)
    const started = performance.now()
    assert.equal(tooDeepMember(body), undefined)
    const elapsed = performance.now() - started
    assert.ok(elapsed < 100, `took ${elapsed.toFixed(1)} ms`)
  })
})
