import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SANDBOX_LIMITS } from '../../src/custom-templates/sandbox/limits.js'
import type { ModuleAnswer } from '../../src/custom-templates/sandbox/module-answer.js'
import { SandboxWorker } from '../../src/custom-templates/sandbox/sandbox-worker.js'
import { StrategyError } from '../../src/custom-templates/sandbox/strategy-error.js'
import { StrategyInstance } from '../../src/custom-templates/sandbox/strategy-instance.js'
import { metrics } from '../../src/ops/registry.js'

const CONTEXT = { symbols: ['BTCUSDT'], timeframe: '1h', interval_ms: 3_600_000, rules: { BTCUSDT: { tick_size: 0.1, step_size: 0.001, min_qty: 0.001, min_notional: 100 } } }
const NONE = new Float64Array(0)

/** `count` bars of 8 columns, closes 100, 101, …, 3 trades each */
function bars(count: number): Float64Array {
  const columns = new Float64Array(count * 8)
  for (let i = 0; i < count; i++) columns.set([i * 3_600_000, 100 + i, 101 + i, 99 + i, 100 + i, 1, 100 + i, 3], i * 8)
  return columns
}

/** A module whose onBar body is `body`, created and fed `count` bars; its answer, or the StrategyError. */
async function answerOnBar(body: string, count = 3, seed = 1): Promise<ModuleAnswer | StrategyError> {
  try {
    const instance = await StrategyInstance.load(`export function create() { return { onBar(bar) { ${body} } } }`, seed)
    instance.create({}, CONTEXT)
    return instance.bars(bars(count), count, NONE, 0)
  } catch (error) {
    if (error instanceof StrategyError) return error
    throw error
  }
}

/** answerOnBar's targets, or the StrategyError. */
async function runOnBar(body: string, count = 3, seed = 1): Promise<Float64Array | StrategyError> {
  const answer = await answerOnBar(body, count, seed)
  return answer instanceof StrategyError ? answer : answer.targets
}

function assertFails(result: Float64Array | ModuleAnswer | StrategyError, code: StrategyError['code'], message?: RegExp): void {
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
    const count = async () => ({
      terminations: (await metrics.sandboxWatchdog.get()).values[0]!.value,
      timeouts: (await metrics.sandboxRuns.get()).values.find((v) => v.labels.outcome === 'timeout')!.value,
      ok: (await metrics.sandboxRuns.get()).values.find((v) => v.labels.outcome === 'ok')!.value,
    })
    const before = await count()
    const started = Date.now()
    await assert.rejects(worker.request({ type: 'inspect', source: code, language: 'javascript' }, 500), (error: StrategyError) => error.code === 'STRATEGY_TIMEOUT')
    const after = await count()
    assert.deepEqual([after.terminations - before.terminations, after.timeouts - before.timeouts, after.ok - before.ok], [1, 1, 0], 'one watchdog termination, one run timed out')
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
    assertFails(await runOnBar('return { valueOf() { return 0.5 } }'), 'STRATEGY_INVALID_OUTPUT', /returned an object with the unknown key "valueOf"/)
    assertFails(await runOnBar('return null'), 'STRATEGY_INVALID_OUTPUT', /returned null/)
    assertFails(await runOnBar('return 1.5'), 'STRATEGY_INVALID_OUTPUT', /returned 1.5/)
    assertFails(await runOnBar('return -Infinity'), 'STRATEGY_INVALID_OUTPUT')
    assertFails(await runOnBar('return undefined'), 'STRATEGY_INVALID_OUTPUT')
    const targets = await runOnBar('return bar.close > 101 ? -1 : NaN')
    assert.ok(targets instanceof Float64Array)
    assert.deepEqual(Array.from(targets), [Number.NaN, Number.NaN, -1])
  })

  it('takes { target, stop_price?, take_profit_price? }: absent or undefined keeps (NaN), null removes (0), a price is set', async () => {
    const answer = await answerOnBar(
      'return bar.close === 100 ? { target: 1, stop_price: 95 } : bar.close === 101 ? { target: NaN, stop_price: null, take_profit_price: 110.5 } : { target: 0.5, stop_price: undefined }',
    )
    assert.ok(!(answer instanceof StrategyError), String(answer))
    assert.deepEqual(Array.from(answer.targets), [1, Number.NaN, 0.5])
    assert.deepEqual(Array.from(answer.levels!), [95, Number.NaN, 0, 110.5, Number.NaN, Number.NaN])
    // A module answering numbers, or objects without levels, sends targets alone: no levels cross.
    for (const body of ['return bar.close > 100 ? 0.5 : NaN', 'return { target: bar.close > 100 ? 0.5 : NaN }', 'return { target: 1, take_profit_price: undefined }']) {
      const plain = await answerOnBar(body)
      assert.ok(!(plain instanceof StrategyError), String(plain))
      assert.equal(plain.levels, undefined, body)
    }
  })

  it('refuses an answer object with a bad key, target or price, naming the key and the bar', async () => {
    // The third bar (open time 7200000) answers wrongly; the first two are fine.
    const at = (answer: string) => `return bar.close < 102 ? { target: NaN, stop_price: 90 } : ${answer}`
    assertFails(await runOnBar(at('{ target: 1, stop: 95 }')), 'STRATEGY_INVALID_OUTPUT', /^onBar returned an object with the unknown key "stop" for the bar at 7200000; its keys are target, stop_price and take_profit_price/)
    assertFails(await runOnBar(at('{ stop_price: 95 }')), 'STRATEGY_INVALID_OUTPUT', /^onBar returned an object without target for the bar at 7200000/)
    assertFails(await runOnBar(at('{ target: 2 }')), 'STRATEGY_INVALID_OUTPUT', /^onBar returned target 2 for the bar at 7200000; a target is a number in \[-1, 1\]/)
    assertFails(await runOnBar(at('{ target: "1" }')), 'STRATEGY_INVALID_OUTPUT', /^onBar returned target string for the bar at 7200000/)
    for (const [value, shown] of [['Infinity', 'Infinity'], ['-5', '-5'], ['0', '0'], ['NaN', 'NaN'], ['"95"', 'string'], ['{}', 'object']]) {
      assertFails(await runOnBar(at(`{ target: 1, stop_price: ${value} }`)), 'STRATEGY_INVALID_OUTPUT', new RegExp(`^onBar returned stop_price ${shown} for the bar at 7200000; a price is a finite number > 0, null to remove the level, or absent to keep it`))
    }
    assertFails(await runOnBar(at('{ target: 0, take_profit_price: -Infinity }')), 'STRATEGY_INVALID_OUTPUT', /^onBar returned take_profit_price -Infinity for the bar at 7200000/)
  })

  it("does not let a module forge its checked answer through the intrinsics it can redefine (issue 37)", async () => {
    // The driver once returned out.buffer, read through %TypedArray%.prototype.buffer: a module that redefined
    // that getter answered −1e308 and Infinity after the checks. byteLength is redefined too: the host reads the
    // answer's length in C, never through the getter.
    const forge = `const forged = new ArrayBuffer(24); new Float64Array(forged).fill(-1e308)
Object.defineProperty(Object.getPrototypeOf(Float64Array.prototype), 'buffer', { get() { return forged } })
Object.defineProperty(ArrayBuffer.prototype, 'byteLength', { get() { return 1 << 20 } })
Float64Array.prototype.fill = function () { return this }
export function create() { return { onBar(bar) { return bar.close === 101 ? { target: 0.5, stop_price: 99 } : 0.25 } } }`
    const instance = await StrategyInstance.load(forge, 1)
    instance.create({}, CONTEXT)
    const answer = instance.bars(bars(3), 3, NONE, 0)
    assert.deepEqual(Array.from(answer.targets), [0.25, 0.5, 0.25])
    assert.deepEqual(Array.from(answer.levels!), [Number.NaN, Number.NaN, 99, Number.NaN, Number.NaN, Number.NaN])
  })

  it('takes per symbol of a step a number or an answer object, and refuses a bad one naming the symbol', async () => {
    const context = { ...CONTEXT, symbols: ['BTCUSDT', 'ETHUSDT'], rules: { BTCUSDT: CONTEXT.rules.BTCUSDT, ETHUSDT: CONTEXT.rules.BTCUSDT } }
    const step = Float64Array.from([0, ...bars(1), 1, ...bars(1)])
    const load = async (answer: string) => {
      const instance = await StrategyInstance.load(`export const multi_symbol = true\nexport function create() { return { onStep(bars) { return ${answer} } } }`, 1)
      instance.create({}, context)
      return instance
    }
    const good = (await load('{ BTCUSDT: { target: 0.5, stop_price: 90, take_profit_price: null }, ETHUSDT: 0 }')).step(step, 2, NONE, 0)
    assert.deepEqual(Array.from(good.targets), [0.5, 0])
    assert.deepEqual(Array.from(good.levels!), [90, 0, Number.NaN, Number.NaN])
    const plain = (await load('{ ETHUSDT: { target: -0.5 } }')).step(step, 2, NONE, 0)
    assert.deepEqual(Array.from(plain.targets), [Number.NaN, -0.5])
    assert.equal(plain.levels, undefined)
    const bad = await load('{ BTCUSDT: 0.5, ETHUSDT: { target: 0, take_profit_price: -1 } }')
    assert.throws(() => bad.step(step, 2, NONE, 0), (error: StrategyError) => {
      assert.equal(error.code, 'STRATEGY_INVALID_OUTPUT')
      assert.match(error.message, /^onStep for ETHUSDT returned take_profit_price -1 for the bar at 0; a price is a finite number > 0/)
      return true
    })
  })

  it('reports a throw with its line:column', async () => {
    assertFails(await runOnBar('\n  null.x'), 'STRATEGY_ERROR', /TypeError: .*\(strategy\.js 2:\d+\)/)
  })

  it('reaches nothing of the host', async () => {
    const probes = ['process', 'require', 'fetch', 'setTimeout', 'WebAssembly', 'SharedArrayBuffer', 'Atomics', 'Date', 'performance', 'console']
    const targets = await runOnBar(`return [${probes.map((p) => `typeof ${p}`).join(', ')}].every((t) => t === 'undefined') ? 1 : 0`, 1)
    assert.deepEqual(Array.from(targets as Float64Array), [1])
    assertFails(await runOnBar('return import("node:fs")', 1), 'STRATEGY_INVALID_OUTPUT', /returned an object without target/)
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
    const { targets } = instance.bars(bars(3), 3, Float64Array.from([1.5 * 3_600_000, 0.5, 100]), 1)
    assert.deepEqual(Array.from(targets), [0, 0.5, 0.5])
  })
})
