import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { StrategyError } from '../../src/custom-templates/sandbox/strategy-error.js'
import { refuseUnplacedLevels } from '../../src/live/brokers/unplaced-levels.js'

describe('a live run whose module states a protective level', () => {
  it('stops at the first price stated, and lets keep (NaN), remove (0) and built-ins (no levels) pass', () => {
    refuseUnplacedLevels(undefined)
    refuseUnplacedLevels(new Float64Array(2))
    refuseUnplacedLevels(Float64Array.of(Number.NaN, Number.NaN, 0, Number.NaN))
    for (const levels of [Float64Array.of(100.5, Number.NaN), Float64Array.of(Number.NaN, Number.NaN, Number.NaN, 2)]) {
      assert.throws(
        () => refuseUnplacedLevels(levels),
        (error: unknown) => error instanceof StrategyError && error.code === 'STRATEGY_ERROR' && /live runs place no protective orders yet/.test(error.message),
      )
    }
  })
})
