import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { closestSymbol, editDistance } from '../../src/market/closest-symbol.js'

describe('the closest listed symbol', () => {
  it('counts a swap of neighbours as one edit, beside insertions, deletions and substitutions', () => {
    assert.equal(editDistance('BTCUSTD', 'BTCUSDT'), 1)
    assert.equal(editDistance('BTCUSD', 'BTCUSDT'), 1)
    assert.equal(editDistance('BTCUSDTT', 'BTCUSDT'), 1)
    assert.equal(editDistance('ETCUSDT', 'BTCUSDT'), 1)
    assert.equal(editDistance('', 'ABC'), 3)
    assert.equal(editDistance('ABC', 'ABC'), 0)
  })

  it('suggests the nearest within 3 edits, the first listed on a tie, and nothing beyond', () => {
    const listed = ['BTCUSDT', 'ETHUSDT', 'ETCUSDT', 'SOLUSDT']
    assert.equal(closestSymbol('BTCUSTD', listed), 'BTCUSDT')
    assert.equal(closestSymbol('EHTUSDT', listed), 'ETHUSDT')
    assert.equal(closestSymbol('ETXUSDT', listed), 'ETHUSDT')
    assert.equal(closestSymbol('ZZZZZZZZ', listed), undefined)
  })
})
