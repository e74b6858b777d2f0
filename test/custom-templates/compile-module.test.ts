import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compileModule } from '../../src/custom-templates/sandbox/compile-module.js'
import { SANDBOX_LIMITS } from '../../src/custom-templates/sandbox/limits.js'
import { StrategyError } from '../../src/custom-templates/sandbox/strategy-error.js'
import { StrategyInstance } from '../../src/custom-templates/sandbox/strategy-instance.js'

const CONTEXT = { symbols: ['X'], timeframe: '1h', interval_ms: 3_600_000, rules: {} }

describe('compiling a module', () => {
  it('strips TypeScript, imports only types use included, and keeps every line where it was', async () => {
    const source = [
      "import { Bar } from 'perpetua/strategy'",
      "import type { StrategyContext } from 'perpetua/strategy'",
      'export function create(_p: unknown, _ctx: StrategyContext) {',
      '  return {',
      '    onBar(bar: Bar): number {',
      '      if (bar.close > 100) throw new Error("too high")',
      '      return NaN',
      '    },',
      '  }',
      '}',
    ].join('\n')
    const compiled = compileModule(source, 'typescript')
    assert.equal(compiled.code.split('\n').length, source.split('\n').length)
    const instance = await StrategyInstance.load(compiled.code, 1)
    instance.create({}, CONTEXT)
    const columns = Float64Array.from([0, 1, 1, 1, 101, 1, 101, 1])
    assert.throws(() => instance.bars(columns, 1, new Float64Array(0), 0), (error: StrategyError) => /too high \(strategy\.js 6:\d+\)/.test(error.message))
  })

  it('keeps an import of a value, which the sandbox refuses', async () => {
    const compiled = compileModule("import { sma } from 'indicators'\nexport function create() { return { onBar: () => sma } }", 'typescript')
    await assert.rejects(StrategyInstance.load(compiled.code, 1), /imports are not available in a strategy module \(indicators\)/)
  })

  it('names the line and column of a TypeScript parse error, and refuses a source over the limit', () => {
    assert.throws(() => compileModule('let x = (abcdef ghi)', 'typescript'), /at 1:17: /)
    assert.throws(() => compileModule('x'.repeat(SANDBOX_LIMITS.sourceBytes + 1), 'javascript'), /larger than 256 KiB/)
  })
})
