import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { RequestWindow, WeightBudget } from '../../src/market/upstream-budget.js'

describe('WeightBudget', () => {
  it('stops short of the limit by its margin, counting calls in flight', () => {
    const budget = new WeightBudget(2400, 0.1)
    assert.equal(budget.ceiling, 2160)
    const now = 60_000 * 100
    budget.settle(0, { answered: true, reported: 2100 }, now)
    assert.equal(budget.tryReserve(40, now), true, '2140 is under 2160')
    assert.equal(budget.tryReserve(40, now), false, 'a second 40 in flight would make 2180')
    budget.settle(40, { answered: true, reported: 2140 }, now)
    assert.equal(budget.usedAt(now), 2140)
    assert.equal(budget.tryReserve(10, now), true)
    assert.equal(budget.tryReserve(20, now), false)
  })

  it('starts again at each new minute and takes the exchange’s count over its own', () => {
    const budget = new WeightBudget(2400, 0.1)
    const minute = 60_000 * 7
    budget.settle(0, { answered: true, reported: 2160 }, minute + 10)
    assert.equal(budget.tryReserve(1, minute + 59_999), false)
    assert.equal(budget.tryReserve(1, minute + 60_000), true, 'the next window is empty')
    budget.settle(1, { answered: true, reported: 5 }, minute + 60_001)
    assert.equal(budget.usedAt(minute + 60_001), 5)
    budget.settle(0, { answered: true, reported: 3 }, minute + 60_002) // an older answer arriving late
    assert.equal(budget.usedAt(minute + 60_002), 5)
  })

  it('adds the weight of an answer without a header, and nothing for a call that got no answer', () => {
    const budget = new WeightBudget(100, 0)
    assert.ok(budget.tryReserve(40, 0))
    budget.settle(40, { answered: true }, 0)
    assert.ok(budget.tryReserve(40, 0))
    budget.settle(40, { answered: false }, 0)
    assert.equal(budget.usedAt(0), 40)
  })

  it('keeps a share of the limit from calls that can do without', () => {
    const budget = new WeightBudget(2400, 0.1)
    budget.settle(0, { answered: true, reported: 1790 }, 0)
    assert.equal(budget.tryReserve(10, 0, 0.15), true, '1800 is the refresh ceiling')
    assert.equal(budget.tryReserve(10, 0, 0.15), false)
    assert.equal(budget.tryReserve(10, 0), true, 'a call without a fallback may go on to 2160')
  })

  it('always lets weight-0 calls through', () => {
    const budget = new WeightBudget(10, 0)
    budget.settle(0, { answered: true, reported: 50 }, 0)
    assert.equal(budget.tryReserve(0, 0), true)
  })
})

describe('RequestWindow', () => {
  it('counts requests over a sliding window and refuses past its ceiling', () => {
    const window = new RequestWindow(10, 0.2, 1000)
    for (let i = 0; i < 8; i++) assert.ok(window.tryTake(i))
    assert.equal(window.tryTake(100), false)
    assert.equal(window.countAt(100), 8)
    assert.equal(window.tryTake(1000), true, 'the first request left the window')
    assert.equal(window.tryTake(1000), false)
  })

  it('keeps a share of the window from calls that can do without', () => {
    const window = new RequestWindow(10, 0, 1000)
    for (let i = 0; i < 7; i++) assert.ok(window.tryTake(0, 0.3))
    assert.equal(window.tryTake(0, 0.3), false)
    assert.equal(window.tryTake(0), true)
  })
})
