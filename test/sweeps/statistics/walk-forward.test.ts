import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { cagr, calmarRatio, maxDrawdown, sharpeRatio, sortinoRatio } from '../../../src/engine/metrics.js'
import { type SliceMetrics, WALK_FORWARD_OBJECTIVES, walkForward } from '../../../src/sweeps/statistics/index.js'
import { sweepLikeReturns } from './helpers.js'

const DAY_MS = 86_400_000
const START = Date.UTC(2021, 0, 2)
const daysOf = (rows: number) => Array.from({ length: rows }, (_, t) => START + t * DAY_MS)

/** The metrics of a run of daily returns through the engine's own functions, on plain arrays. */
function engineMetrics(returns: number[]): SliceMetrics {
  const values = [1]
  for (const r of returns) values.push(values[values.length - 1]! * (1 + r))
  const total = values[values.length - 1]! - 1
  const growth = cagr(1, 1 + total, returns.length)
  const drawdown = maxDrawdown(values)
  const gains = returns.filter((r) => r > 0).reduce((a, b) => a + b, 0)
  const losses = -returns.filter((r) => r < 0).reduce((a, b) => a + b, 0)
  const moved = returns.filter((r) => r !== 0).length
  return {
    total_return: total,
    cagr: growth,
    sharpe: sharpeRatio(returns),
    sortino: sortinoRatio(returns),
    max_drawdown: drawdown,
    calmar: calmarRatio(growth, drawdown),
    daily_profit_factor: losses === 0 ? null : gains / losses,
    daily_win_rate: moved === 0 ? null : returns.filter((r) => r > 0).length / moved,
  }
}

/** Walk-forward written plainly: windows by loops, every configuration's slice through the engine's metrics. */
function bruteForce(returns: Float64Array[], inDays: number, outDays: number, anchored: boolean, objective: string) {
  const key = WALK_FORWARD_OBJECTIVES[objective]!
  const windows: { chosen: number; value: number | null; inFrom: number; outFrom: number }[] = []
  for (let outFrom = inDays; outFrom + outDays <= returns[0]!.length; outFrom += outDays) {
    const inFrom = anchored ? 0 : outFrom - inDays
    let chosen = -1
    let value: number | null = null
    returns.forEach((column, j) => {
      const v = engineMetrics(Array.from(column.subarray(inFrom, outFrom)))[key]
      if (v !== null && (value === null || v > value)) {
        value = v
        chosen = j
      }
    })
    windows.push({ chosen: Math.max(0, chosen), value, inFrom, outFrom })
  }
  const stitched = windows.flatMap((w) => Array.from(returns[w.chosen]!.subarray(w.outFrom, w.outFrom + outDays)))
  return { windows, stitched }
}

function assertMetricsNear(got: SliceMetrics, want: SliceMetrics, what: string): void {
  for (const key of Object.keys(want) as (keyof SliceMetrics)[]) {
    const [g, w] = [got[key], want[key]]
    if (w === null) assert.equal(g, null, `${what} ${key}`)
    else assert.ok(g !== null && Math.abs(g - w) <= 1e-9 * Math.max(1, Math.abs(w)), `${what} ${key}: ${g}, expected ${w}`)
  }
}

describe('walkForward against a plain computation with the engine’s metrics', () => {
  const returns = sweepLikeReturns(21, 15, 420)
  const days = daysOf(420)
  for (const anchored of [false, true])
    for (const objective of Object.keys(WALK_FORWARD_OBJECTIVES))
      it(`${anchored ? 'anchored' : 'rolling'}, objective ${objective}`, () => {
        const result = walkForward({ returns, days, in_sample_days: 90, out_of_sample_days: 40, anchored, objective, capital: 1000 })
        const want = bruteForce(returns, 90, 40, anchored, objective)
        assert.equal(result.reason === undefined || result.efficiency === null, true)
        assert.equal(result.windows.length, Math.floor((420 - 90) / 40))
        result.windows.forEach((window, k) => {
          const w = want.windows[k]!
          assert.equal(window.chosen, w.chosen, `window ${k}`)
          assert.equal(window.in_sample.from, w.inFrom)
          assert.equal(window.out_of_sample.from, w.outFrom)
          assert.equal(window.in_sample.first_day, days[w.inFrom])
          assert.equal(window.out_of_sample.last_day, days[w.outFrom + 39])
          if (w.value === null) assert.equal(window.in_sample_metric, null)
          else assert.ok(Math.abs(window.in_sample_metric! - w.value) <= 1e-9 * Math.max(1, Math.abs(w.value)), `window ${k} in-sample ${objective}`)
          const column = Array.from(returns[w.chosen]!)
          assertMetricsNear(window.in_sample_metrics, engineMetrics(column.slice(w.inFrom, w.outFrom)), `window ${k} in-sample`)
          assertMetricsNear(window.out_of_sample_metrics, engineMetrics(column.slice(w.outFrom, w.outFrom + 40)), `window ${k} out-of-sample`)
        })
        // The stitched curve: 1,000 on the last in-sample day, then compounded one point per out-of-sample day.
        assert.equal(result.curve.length, want.stitched.length + 1)
        assert.deepEqual(result.curve[0], [days[89], 1000])
        let equity = 1000
        want.stitched.forEach((r, t) => {
          equity *= 1 + r
          assert.equal(result.curve[t + 1]![0], days[90 + t])
          assert.ok(Math.abs(result.curve[t + 1]![1] - equity) <= 1e-9 * equity)
        })
        const stitched = engineMetrics(want.stitched)
        assertMetricsNear(result.metrics!, stitched, 'stitched')
        const inCagr = result.windows.reduce((a, w) => a + w.in_sample_metrics.cagr!, 0) / result.windows.length
        assert.ok(Math.abs(result.in_sample_cagr! - inCagr) <= 1e-12 * Math.abs(inCagr))
        if (inCagr > 0) assert.ok(Math.abs(result.efficiency! - stitched.cagr! / inCagr) <= 1e-9 * Math.abs(result.efficiency!))
        else assert.equal(result.efficiency, null)
      })
})

describe('walkForward edge cases', () => {
  const returns = sweepLikeReturns(22, 4, 100)
  const days = daysOf(100)

  it('windows fit exactly, a partial last window is dropped', () => {
    assert.equal(walkForward({ returns, days, in_sample_days: 60, out_of_sample_days: 20 }).windows.length, 2)
    assert.equal(walkForward({ returns, days, in_sample_days: 60, out_of_sample_days: 30 }).windows.length, 1)
    assert.equal(walkForward({ returns, days, in_sample_days: 99, out_of_sample_days: 1 }).windows.length, 1)
  })

  it('configurations with the same days in a window tie there, whatever came before: the first is chosen', () => {
    for (const objective of Object.keys(WALK_FORWARD_OBJECTIVES)) {
      // Equal on days 30..59 (window 1's in-sample days), different before and after.
      const first = Float64Array.from(returns[0]!, (r, t) => (t < 30 ? r * 3 + 0.001 : r))
      const second = Float64Array.from(returns[0]!, (r, t) => (t >= 60 ? r + 0.01 : t < 30 ? r / 7 - 0.0003 : r))
      const result = walkForward({ returns: [returns[1]!, first, second], days, in_sample_days: 30, out_of_sample_days: 30, objective })
      const want = bruteForce([returns[1]!, first, second], 30, 30, false, objective)
      assert.deepEqual(result.windows.map((w) => w.chosen), want.windows.map((w) => w.chosen), objective)
    }
  })

  it('a configuration whose objective is undefined everywhere loses; all undefined picks the first, metric null', () => {
    const flat = [new Float64Array(100), new Float64Array(100), returns[2]!]
    const result = walkForward({ returns: flat, days, in_sample_days: 50, out_of_sample_days: 25, objective: 'sharpe' })
    assert.deepEqual(result.windows.map((w) => w.chosen), [2, 2])
    const none = walkForward({ returns: flat.slice(0, 2), days, in_sample_days: 50, out_of_sample_days: 25 })
    assert.deepEqual(none.windows.map((w) => [w.chosen, w.in_sample_metric]), [[0, null], [0, null]])
    assert.equal(none.metrics!.sharpe, null)
    assert.equal(none.efficiency, null)
    assert.ok(none.reason)
  })

  it('a ruined configuration: total return and drawdown −1 in the windows that hold the ruin, the curve stays at 0', () => {
    const ruin = Float64Array.from(returns[0]!)
    ruin[70] = -1
    for (let t = 71; t < 100; t++) ruin[t] = 0
    const result = walkForward({ returns: [ruin], days, in_sample_days: 60, out_of_sample_days: 20, capital: 50 })
    assert.equal(result.windows[0]!.out_of_sample_metrics.total_return, -1)
    assert.equal(result.windows[0]!.out_of_sample_metrics.max_drawdown, -1)
    assert.equal(result.curve[result.curve.length - 1]![1], 0)
    assert.equal(result.metrics!.cagr, -1)
    assert.equal(result.efficiency, null)
  })

  it('bad input gives no windows and a reason naming it, never a throw or NaN', () => {
    const cases: [Parameters<typeof walkForward>[0], RegExp][] = [
      [{ returns: [], days: [], in_sample_days: 10, out_of_sample_days: 5 }, /no configurations/],
      [{ returns: [returns[0]!, returns[1]!.subarray(1)], days, in_sample_days: 10, out_of_sample_days: 5 }, /different numbers/],
      [{ returns, days: days.slice(1), in_sample_days: 10, out_of_sample_days: 5 }, /99 days for 100 daily returns/],
      [{ returns: [returns[0]!, Float64Array.from(returns[1]!, (r, t) => (t === 7 ? Number.POSITIVE_INFINITY : r))], days, in_sample_days: 10, out_of_sample_days: 5 }, /configuration 1 has a non-finite return on row 7/],
      [{ returns, days, in_sample_days: 1, out_of_sample_days: 5 }, /in_sample_days must be an integer of at least 2/],
      [{ returns, days, in_sample_days: 10, out_of_sample_days: 0 }, /out_of_sample_days/],
      [{ returns, days, in_sample_days: 10, out_of_sample_days: 5, capital: -1 }, /capital/],
      [{ returns, days, in_sample_days: 10, out_of_sample_days: 5, objective: 'total_trades' }, /objective total_trades has no daily form/],
      [{ returns, days, in_sample_days: 10, out_of_sample_days: 5, objective: 'constructor' }, /objective constructor/],
      [{ returns, days, in_sample_days: 90, out_of_sample_days: 11 }, /100 days of returns hold no window of 90 in-sample and 11/],
    ]
    for (const [input, reason] of cases) {
      const result = walkForward(input)
      assert.deepEqual([result.windows, result.curve, result.metrics, result.efficiency], [[], [], null, null])
      assert.match(result.reason!, reason)
    }
  })
})
