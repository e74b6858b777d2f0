import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseGridValues } from '../../src/sweeps/grid-values.js'

describe('grid values as typed (src/sweeps/grid-values.ts)', () => {
  it('reads grid values in the CLI forms and names what is wrong', () => {
    assert.deepEqual(parseGridValues('5..50:5'), [5, 10, 15, 20, 25, 30, 35, 40, 45, 50])
    assert.deepEqual(parseGridValues('0.1..0.3:0.1'), [0.1, 0.2, 0.3], 'each value from its index: no 0.30000000000000004')
    assert.deepEqual(parseGridValues('2..4'), [2, 3, 4])
    assert.deepEqual(parseGridValues(' 20, 30,50 '), [20, 30, 50])
    assert.deepEqual(parseGridValues('true,false'), [true, false])
    assert.throws(() => parseGridValues(''), /give values/)
    assert.throws(() => parseGridValues('50..5'), /backwards/)
    assert.throws(() => parseGridValues('5..10:0'), /not a number|step/)
    assert.throws(() => parseGridValues('1..x'), /"1\.\.x" is not a number/)
    assert.throws(() => parseGridValues('0..20000'), /20001 values; a sweep runs at most 10000/)
  })
})
