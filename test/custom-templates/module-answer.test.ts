import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { moduleAnswer } from '../../src/custom-templates/sandbox/module-answer.js'
import { StrategyError } from '../../src/custom-templates/sandbox/strategy-error.js'

/*
 * The host's check of what crosses back from the sandbox, fed the bytes a tampered driver could send: the
 * guest's own checks run in the module's realm, so these bytes are whatever the guest made them.
 */
const where = (k: number) => `the bar at ${k}`

/** `values` as the bytes of a Float64Array, starting at `offset` inside a larger buffer (the guest's heap is not aligned for us). */
function bytesOf(values: number[], offset = 3): Uint8Array {
  const heap = new Uint8Array(offset + 8 * values.length + 5)
  heap.set(new Uint8Array(Float64Array.from(values).buffer), offset)
  return heap.subarray(offset, offset + 8 * values.length)
}

function refused(run: () => unknown, message: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof StrategyError, String(error))
    assert.equal(error.code, 'STRATEGY_INVALID_OUTPUT')
    assert.match(error.message, message)
    return true
  })
}

describe("the host's check of a module's answer", () => {
  it('reads n targets alone, or n targets then 2n levels, from unaligned bytes', () => {
    const plain = moduleAnswer(bytesOf([1, Number.NaN, -0.5]), 3, where)
    assert.deepEqual(Array.from(plain.targets), [1, Number.NaN, -0.5])
    assert.equal(plain.levels, undefined)
    const stated = moduleAnswer(bytesOf([0.5, Number.NaN, 95, Number.NaN, 0, 120.5]), 2, where)
    assert.deepEqual(Array.from(stated.targets), [0.5, Number.NaN])
    assert.deepEqual(Array.from(stated.levels!), [95, Number.NaN, 0, 120.5])
    assert.deepEqual(Array.from(moduleAnswer(new Uint8Array(0), 0, where).targets), [])
  })

  it('refuses a byte length that is neither n nor 3n numbers', () => {
    refused(() => moduleAnswer(new Uint8Array(3), 1, where), /^the sandbox answered 3 bytes for 1 targets from the bar at 0: 8 bytes a target, or 24 with levels$/)
    refused(() => moduleAnswer(bytesOf([0.5, 95]), 1, where), /answered 16 bytes for 1 targets/)
    refused(() => moduleAnswer(bytesOf([0.5]), 2, where), /answered 8 bytes for 2 targets/)
    refused(() => moduleAnswer(new Uint8Array(8), 0, where), /^the sandbox answered 8 bytes for 0 targets: /)
  })

  it('refuses a forged target: out of [-1, 1] or infinite, naming it and its bar', () => {
    for (const forged of [-1e308, 1.0000001, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      refused(() => moduleAnswer(bytesOf([0, forged]), 2, where), new RegExp(`^the sandbox answered a target of ${String(forged).replace('+', '\\+')} for the bar at 1: a target is NaN or a number in \\[-1, 1\\]$`))
    }
  })

  it('refuses a forged level: negative, infinite, naming the side and its bar', () => {
    const cases: [number[], RegExp][] = [
      [[0, 0, 95, Number.NaN, -5, Number.NaN], /a stop_price of -5 for the bar at 1: a level is NaN \(keep\), 0 \(remove\) or a finite price > 0$/],
      [[0, 0, 95, Number.POSITIVE_INFINITY, Number.NaN, Number.NaN], /a take_profit_price of Infinity for the bar at 0/],
      [[0, 0, Number.NaN, Number.NaN, Number.NaN, Number.NEGATIVE_INFINITY], /a take_profit_price of -Infinity for the bar at 1/],
      [[0, 0, -Number.MIN_VALUE, Number.NaN, Number.NaN, Number.NaN], /a stop_price of -5e-324 for the bar at 0/],
    ]
    for (const [values, message] of cases) refused(() => moduleAnswer(bytesOf(values), 2, where), message)
  })
})
