import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ClosedBar } from '../../src/live/brokers/broker.js'
import { StepAssembly } from '../../src/live/runner/step-assembly.js'

const M = 60_000
const T0 = Date.UTC(2025, 5, 17, 6, 0, 0)
const bar = (k: number, close = 100 + k): ClosedBar => ({ openTime: T0 + k * M, open: close, high: close, low: close, close, volume: 1 })

describe('step assembly across kline streams', () => {
  it('a step is complete once every symbol closed its bar, not before', () => {
    const a = new StepAssembly(2, M)
    a.startAt(T0)
    assert.equal(a.status(), 'empty')
    a.add(0, bar(0))
    assert.equal(a.status(), 'waiting', 'one symbol of two: wait for the other')
    a.add(1, bar(0, 7))
    assert.equal(a.status(), 'complete')
    const step = a.take()
    assert.equal(step.openTime, T0)
    assert.deepEqual(step.bars.map((b) => b?.close), [100, 7])
    assert.equal(a.next, T0 + M)
    assert.equal(a.status(), 'empty')
  })

  it('a bar lost in one stream is overtaken once that symbol sent a later bar: its step needs REST, at once', () => {
    const a = new StepAssembly(2, M)
    a.startAt(T0)
    a.add(0, bar(0))
    a.add(0, bar(1))
    assert.equal(a.status(), 'waiting', 'symbol 1 was not heard at all yet')
    a.add(1, bar(1))
    assert.equal(a.status(), 'overtaken')
    assert.equal(a.frontier(), T0 + M)
    assert.deepEqual(a.missing(a.frontier()), [1], 'only the symbol that lost its bar is read')
    a.add(1, bar(0, 5)) // REST had it
    assert.equal(a.status(), 'complete')
    assert.deepEqual(a.take().bars.map((b) => b?.close), [100, 5])
    assert.equal(a.status(), 'complete')
  })

  it('a settled step goes with the bars it has (a symbol without a bar is absent, as in a backtest); a bar after it is refused', () => {
    const a = new StepAssembly(3, M)
    a.startAt(T0)
    a.add(0, bar(0))
    a.add(2, bar(0))
    a.add(0, bar(1))
    assert.equal(a.status(), 'waiting')
    assert.deepEqual(a.missing(a.newest()), [1, 2])
    a.settle(a.newest())
    const first = a.take()
    assert.deepEqual(first.bars.map((b) => b !== undefined), [true, false, true])
    assert.equal(a.status(), 'final')
    assert.deepEqual(a.take().bars.map((b) => b !== undefined), [true, false, false])
    assert.equal(a.add(1, bar(0)), false, 'the step was acted on without it')
    assert.equal(a.add(1, bar(2)), true)
    assert.equal(a.status(), 'waiting')
  })

  it('startAt drops what came before the first step; a repeated bar is kept once', () => {
    const a = new StepAssembly(2, M)
    a.add(0, bar(0))
    a.add(1, bar(0))
    a.add(0, bar(1))
    a.add(0, bar(1, 999))
    a.add(1, bar(1))
    a.startAt(T0 + M)
    assert.equal(a.status(), 'complete')
    assert.deepEqual(a.take().bars.map((b) => b?.close), [101, 101])
  })
})
