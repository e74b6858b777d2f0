import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { isoTime } from '../../src/backtests/result-format.js'
import { decimal } from '../../src/http/decimals.js'

describe('result formatting', () => {
  it('writes times exactly as Date#toISOString does', () => {
    const edges = [
      0,
      1,
      Date.UTC(1972, 1, 29, 23, 59, 59, 999), // a leap day
      Date.UTC(2000, 1, 29), // divisible by 400: leap
      Date.UTC(2100, 2, 1) - 1, // divisible by 100 only: not leap
      Date.UTC(2023, 0, 1, 0, 5),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999),
      Date.UTC(9999, 11, 31, 23, 59, 59, 999) + 1, // six-digit year: through Date
      -1, // before 1970: through Date
      1.5, // not whole milliseconds: through Date
    ]
    for (const ms of edges) assert.equal(isoTime(ms), new Date(ms).toISOString(), String(ms))
    // Pseudo-random times over the whole range, and every day of four years.
    let x = 12345
    for (let k = 0; k < 20_000; k++) {
      x = (x * 1103515245 + 12345) % 2147483648
      const ms = Math.floor((x / 2147483648) * 253_402_300_800_000)
      assert.equal(isoTime(ms), new Date(ms).toISOString(), String(ms))
    }
    for (let day = Date.UTC(2023, 0, 1); day < Date.UTC(2027, 0, 1); day += 86_400_000 + 3_723_004) {
      assert.equal(isoTime(day), new Date(day).toISOString())
    }
  })

  it('writes decimals without exponents or trailing zeros', () => {
    assert.deepEqual([decimal(1e-7), decimal(-0), decimal(100), decimal(0.1 + 0.2), decimal(-1.5)], ['0.0000001', '0', '100', '0.3', '-1.5'])
  })
})
