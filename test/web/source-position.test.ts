import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Text } from '@codemirror/state'
import { compileModule } from '../../src/custom-templates/sandbox/compile-module.js'
import { guestError } from '../../src/custom-templates/sandbox/strategy-instance.js'
import { diagnosticAt, positionIn } from '../../web/src/editor/source-position.js'

describe('where a refused upload points (web/src/editor/source-position.ts)', () => {
  it('reads the sandbox\'s "strategy.js L:C" and "strategy.js L", as guestError writes them', () => {
    const withColumn = guestError({ name: 'TypeError', message: "cannot read property 'x' of undefined", stack: '    at onBar (strategy.js:4:22)\n' }).message
    assert.deepEqual(positionIn(`the smoke run over recorded BTCUSDT 1h bars failed: ${withColumn} (bar 2021-01-01T00:00:00.000Z)`), { line: 4, column: 22 })
    const lineOnly = guestError({ name: 'Error', message: 'boom', stack: '    at create (strategy.js:7)\n' }).message
    assert.deepEqual(positionIn(`the module does not load: ${lineOnly}`), { line: 7, column: undefined })
  })

  it('reads the place under the uploaded file\'s name (issue 35), as guestError writes it for a named module', () => {
    const named = guestError({ name: 'TypeError', message: 'x is not a function', stack: '    at onBar (strategy.js:6:53)\n' }, 'atr-breakout.ts').message
    assert.equal(named, 'TypeError: x is not a function (atr-breakout.ts 6:53)')
    assert.deepEqual(positionIn(`the smoke run over recorded BTCUSDT 1h bars failed: ${named}`), { line: 6, column: 53 })
    const spaced = guestError({ name: 'Error', message: 'boom', stack: '    at create (strategy.js:2)\n' }, 'ATR breakout.js').message
    assert.deepEqual(positionIn(`the module does not load: ${spaced}`), { line: 2, column: undefined })
  })

  it('reads a TypeScript parse error\'s "at L:C", as compileModule writes it', () => {
    let message = ''
    try {
      compileModule('export const params = {}\nlet b: = 2\n', 'typescript')
    } catch (error) {
      message = (error as Error).message
    }
    assert.match(message, /^TypeScript does not parse at 2:\d+/)
    assert.equal(positionIn(message)?.line, 2)
  })

  it('names no place when the message has none, nor for an "at L:C" inside the module\'s own error text', () => {
    assert.equal(positionIn('params.a.default 100 is outside its bounds [1, 10]'), undefined)
    assert.equal(positionIn('the module must export a function create(params, ctx)'), undefined)
    assert.equal(positionIn('the smoke run over recorded BTCUSDT 1h bars failed: Error: stopped at 3:4'), undefined)
    // The sandbox's own place wins over the module's words.
    assert.deepEqual(positionIn('the module does not load: Error: stopped at 3:4 (strategy.js 9:2)'), { line: 9, column: 2 })
  })

  it('marks the word starting at the column, one character when no word starts there, the line when no column', () => {
    const doc = Text.of(['export const params = {}', 'export const x = ;', '  return bar.nope.x'])
    const at = (line: number, column: number | undefined) => {
      const d = diagnosticAt(doc, { line, column }, 'm')
      return [doc.sliceString(d.from, d.to), doc.lineAt(d.from).number, d.from - doc.lineAt(d.from).from + 1, d.severity]
    }
    assert.deepEqual(at(2, 18), [';', 2, 18, 'error'])
    assert.deepEqual(at(3, 10), ['bar', 3, 10, 'error'])
    assert.deepEqual(at(3, 13), ['.', 3, 13, 'error'])
    assert.deepEqual(at(3, 14), ['nope', 3, 14, 'error'])
    assert.deepEqual(at(2, undefined), ['export const x = ;', 2, 1, 'error'])
  })

  it('pulls a place past the text back to its end, so the mark still shows', () => {
    const doc = Text.of(['export function create( {', ''])
    const pastColumn = diagnosticAt(doc, { line: 1, column: 99 }, 'm')
    assert.deepEqual([pastColumn.from, pastColumn.to], [doc.line(1).to, doc.line(1).to])
    const pastLine = diagnosticAt(doc, { line: 7, column: 1 }, 'm')
    assert.equal(doc.lineAt(pastLine.from).number, 2)
  })
})
