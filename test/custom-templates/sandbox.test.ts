import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SANDBOX_LIMITS } from '../../src/custom-templates/sandbox/limits.js'
import { SandboxWorker } from '../../src/custom-templates/sandbox/sandbox-worker.js'
import { StrategyError } from '../../src/custom-templates/sandbox/strategy-error.js'
import { StrategyInstance } from '../../src/custom-templates/sandbox/strategy-instance.js'

const CONTEXT = { symbols: ['BTCUSDT'], timeframe: '1h', interval_ms: 3_600_000, rules: { BTCUSDT: { tick_size: 0.1, step_size: 0.001, min_qty: 0.001, min_notional: 100 } } }
const NONE = new Float64Array(0)

/** `count` bars of 8 columns, closes 100, 101, …, 3 trades each */
function bars(count: number): Float64Array {
  const columns = new Float64Array(count * 8)
  for (let i = 0; i < count; i++) columns.set([i * 3_600_000, 100 + i, 101 + i, 99 + i, 100 + i, 1, 100 + i, 3], i * 8)
  return columns
}

/** A module whose onBar body is `body`, created and fed `count` bars; the targets, or the StrategyError. */
async function runOnBar(body: string, count = 3, seed = 1): Promise<Float64Array | StrategyError> {
  try {
    const instance = await StrategyInstance.load(`export function create() { return { onBar(bar) { ${body} } } }`, seed)
    instance.create({}, CONTEXT)
    return instance.bars(bars(count), count, NONE, 0)
  } catch (error) {
    if (error instanceof StrategyError) return error
    throw error
  }
}

function assertFails(result: Float64Array | StrategyError, code: StrategyError['code'], message?: RegExp): void {
  assert.ok(result instanceof StrategyError, `expected ${code}, got targets ${String(result)}`)
  assert.equal(result.code, code, result.message)
  if (message) assert.match(result.message, message)
}

describe('the strategy sandbox', () => {
  it('interrupts a plain infinite loop at the per-call bound', async () => {
    const started = Date.now()
    assertFails(await runOnBar('for (;;) {}'), 'STRATEGY_TIMEOUT')
    assert.ok(Date.now() - started < SANDBOX_LIMITS.callMs + 2_000)
  })

  it('ends a native loop that ignores the interrupt handler by terminating its thread, and the next thread works', async () => {
    const worker = new SandboxWorker()
    const code = 'export function create() { return { onBar() { return NaN } } }\nexport const params = { x: { type: "integer", default: Array.prototype.indexOf.call({ length: 2 ** 31 }, 1), minimum: -1, maximum: 1 } }'
    // A first request, so the thread has started (seconds under tsx on a loaded host) before the clock below runs.
    await worker.request({ type: 'inspect', source: 'export function create() { return { onBar() { return NaN } } }', language: 'javascript' }, 30_000)
    const started = Date.now()
    await assert.rejects(worker.request({ type: 'inspect', source: code, language: 'javascript' }, 500), (error: StrategyError) => error.code === 'STRATEGY_TIMEOUT')
    // Unstopped, the loop runs for more than 30 s (research fact 3).
    assert.ok(Date.now() - started < 10_000, 'the watchdog ended it, not the loop')
    assert.equal(worker.alive, false)
    const fresh = new SandboxWorker()
    const inspected = await fresh.request<{ description: { warmup: number } }>({ type: 'inspect', source: 'export function create() { return { onBar() { return 0.5 } } }', language: 'javascript' }, 10_000)
    assert.equal(inspected.description.warmup, 0)
    await fresh.close()
  })

  for (const [name, body] of [
    ['typed arrays', 'const kept = []; for (;;) kept.push(new Float64Array(1 << 20))'],
    ['strings', 'const kept = []; let s = "x".repeat(1 << 16); for (let i = 0; ; i++) kept.push(s + i)'],
    ['objects', 'const kept = []; for (let i = 0; ; i++) kept.push({ i, a: [i, i, i] })'],
  ] as const) {
    it(`stops a memory bomb of ${name} at the instance's memory cap`, async () => {
      const result = await runOnBar(body)
      assert.ok(result instanceof StrategyError, 'the bomb must fail')
      assert.ok(result.code === 'STRATEGY_OOM' || result.code === 'STRATEGY_ERROR', `${result.code}: ${result.message}`)
      assert.ok(process.memoryUsage().rss < 1.5 * 2 ** 30, 'the process stayed well below the bomb')
    })
  }

  it('ends deep recursion with a stack overflow', async () => {
    assertFails(await runOnBar('const f = (n) => f(n + 1) + 1; return f(0)'), 'STRATEGY_ERROR', /stack overflow|call stack/i)
  })

  it('refuses a huge return value, non-numbers and targets outside [-1, 1]; NaN keeps', async () => {
    assertFails(await runOnBar('return "x".repeat(1e7)'), 'STRATEGY_INVALID_OUTPUT', /returned string/)
    assertFails(await runOnBar('return { valueOf() { return 0.5 } }'), 'STRATEGY_INVALID_OUTPUT', /returned object/)
    assertFails(await runOnBar('return 1.5'), 'STRATEGY_INVALID_OUTPUT', /returned 1.5/)
    assertFails(await runOnBar('return -Infinity'), 'STRATEGY_INVALID_OUTPUT')
    assertFails(await runOnBar('return undefined'), 'STRATEGY_INVALID_OUTPUT')
    const targets = await runOnBar('return bar.close > 101 ? -1 : NaN')
    assert.ok(targets instanceof Float64Array)
    assert.deepEqual(Array.from(targets), [Number.NaN, Number.NaN, -1])
  })

  it('reports a throw with its line:column', async () => {
    assertFails(await runOnBar('\n  null.x'), 'STRATEGY_ERROR', /TypeError: .*\(strategy\.js 2:\d+\)/)
  })

  it('reaches nothing of the host', async () => {
    const probes = ['process', 'require', 'fetch', 'setTimeout', 'WebAssembly', 'SharedArrayBuffer', 'Atomics', 'Date', 'performance', 'console']
    const targets = await runOnBar(`return [${probes.map((p) => `typeof ${p}`).join(', ')}].every((t) => t === 'undefined') ? 1 : 0`, 1)
    assert.deepEqual(Array.from(targets as Float64Array), [1])
    assertFails(await runOnBar('return import("node:fs")', 1), 'STRATEGY_INVALID_OUTPUT', /returned object/)
    await assert.rejects(StrategyInstance.load('import fs from "node:fs"\nexport function create() {}', 1), /imports are not available/)
    const thisEscape = await runOnBar('try { return this.constructor.constructor("return typeof process")() === "undefined" ? 1 : 0 } catch { return 1 }', 1)
    assert.deepEqual(Array.from(thisEscape as Float64Array), [1])
  })

  it('keeps no state between instances, even of changed intrinsics', async () => {
    const first = await StrategyInstance.load('Array.prototype.leak = 1; Math.max = () => 7; export function create() { return { onBar() { return NaN } } }', 1)
    first.create({}, CONTEXT)
    const second = await runOnBar('return [].leak === undefined && Math.max(0.25, 0) === 0.25 ? 0.25 : 1', 1)
    assert.deepEqual(Array.from(second as Float64Array), [0.25])
  })

  it('seeds Math.random: the same seed gives the same numbers, another seed others', async () => {
    const draw = 'return Math.random() * 2 - 1'
    const [a, b, c] = [await runOnBar(draw, 5, 7), await runOnBar(draw, 5, 7), await runOnBar(draw, 5, 8)]
    assert.deepEqual(Array.from(a as Float64Array), Array.from(b as Float64Array))
    assert.notDeepEqual(Array.from(a as Float64Array), Array.from(c as Float64Array))
  })

  it('delivers funding events before the first bar whose close is after them', async () => {
    const instance = await StrategyInstance.load(
      'export function create() { let seen = 0; return { onFunding(e) { seen = e.rate }, onBar() { return seen } } }',
      1,
    )
    instance.create({}, CONTEXT)
    // An event at 01:30 reaches onFunding before the bar 01:00–02:00, not before the bar 00:00–01:00.
    const targets = instance.bars(bars(3), 3, Float64Array.from([1.5 * 3_600_000, 0.5, 100]), 1)
    assert.deepEqual(Array.from(targets), [0, 0.5, 0.5])
  })
})
