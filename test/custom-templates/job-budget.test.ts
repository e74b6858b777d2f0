import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { inspectModule } from '../../src/custom-templates/sandbox/inspect-module.js'
import { jobBudgetMs, SANDBOX_LIMITS } from '../../src/custom-templates/sandbox/limits.js'
import { loadSmokeData } from '../../src/custom-templates/sandbox/smoke-bars.js'
import { MOMENTUM, SMA } from './modules.js'

/** Budgets that fit the work (issue 34): a job's strategy time from its module's measured cost. */
describe("a custom job's budget", () => {
  it('is the multiple of the measured cost per bar, at least the floor, at most the flat budget; the flat one without a measured cost', () => {
    const { jobMultiple, jobFloorMs, jobBaseMs, jobPerBarUs } = SANDBOX_LIMITS
    const flat = (bars: number) => jobBaseMs + Math.ceil((bars * jobPerBarUs) / 1000)
    assert.equal(jobBudgetMs(8760), flat(8760))
    // 20 µs per bar over a year of 1h bars: 20 × 175.2 ms.
    assert.equal(jobBudgetMs(8760, 20), Math.ceil((8760 * 20 * jobMultiple) / 1000))
    assert.ok(jobBudgetMs(8760, 20) > jobFloorMs && jobBudgetMs(8760, 20) < flat(8760))
    assert.equal(jobBudgetMs(100, 10), jobFloorMs, 'a short job gets the floor')
    assert.equal(jobBudgetMs(8760, 5000), flat(8760), 'never more than the flat budget')
    assert.equal(jobBudgetMs(8760, 0), jobFloorMs)
  })

  it("is measured by the upload's inspection, over every bar the smoke run fed (both symbols of a multi-symbol module)", async () => {
    const smoke = loadSmokeData()
    for (const source of [SMA, MOMENTUM]) {
      const { smokeUsPerBar } = await inspectModule(source, smoke)
      assert.ok(smokeUsPerBar !== undefined && smokeUsPerBar > 0 && Number.isFinite(smokeUsPerBar), String(smokeUsPerBar))
    }
    const slow = await inspectModule('export function create() { let s = 0; return { onBar(b) { for (let i = 0; i < 500; i++) s += i; return NaN } } }', smoke)
    const cheap = await inspectModule('export function create() { return { onBar() { return NaN } } }', smoke)
    assert.ok(slow.smokeUsPerBar! > cheap.smokeUsPerBar!, `${slow.smokeUsPerBar} > ${cheap.smokeUsPerBar}`)
  })
})
