import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { SweepRun } from '../../web/src/api/sweep-types.js'
import { blankCellsText, heatCells } from '../../web/src/pages/sweeps/heatmap-cells.js'
import { emptySearchSpace, gridSize, searchSpaceBody } from '../../web/src/pages/sweeps/search-space-draft.js'
import { equityFromReturns } from '../../web/src/pages/sweeps/returns-equity.js'
import { sortRuns } from '../../web/src/pages/sweeps/runs-order.js'

/** A run as GET …/runs answers it, with only the metrics a test reads set. */
const run = (n: number, params: Record<string, number | boolean>, sharpe: string | null): SweepRun =>
  ({ run_id: `r${n}`, params, metrics: { sharpe, sortino: null, calmar: null, max_drawdown: null, win_rate: null, profit_factor: null, cagr: null, expected_value: null, total_trades: 0, avg_trade_duration_seconds: null } }) as SweepRun

describe('sweep pages: the form\'s search space, the heatmap\'s cells, the runs\' order, the best equity (web/src/pages/sweeps)', () => {
  it('turns the form\'s search space into the request\'s grid or random space, naming the parameter at fault', () => {
    const draft = { ...emptySearchSpace(), swept: ['fast', 'slow', 'allow_short'], switches: ['allow_short'], values: { fast: '5..50:5', slow: '30,50', allow_short: 'true,false' } }
    assert.deepEqual(searchSpaceBody(draft), { grid: { fast: [5, 10, 15, 20, 25, 30, 35, 40, 45, 50], slow: [30, 50], allow_short: [true, false] } })
    assert.deepEqual(gridSize(draft), { count: 40 })
    // A bad grid is said as the CLI's --grid says it: one function reads both (issue 35).
    assert.deepEqual(gridSize({ ...draft, values: { ...draft.values, fast: '50..5:5' } }), { problem: 'fast: "50..5:5" runs backwards: write the smaller end first' })
    assert.throws(() => searchSpaceBody({ ...draft, values: { ...draft.values, slow: '30,x' } }), /^Error: slow: "x" is not a number$/)
    assert.throws(() => searchSpaceBody(emptySearchSpace()), /pick at least one parameter/)
    assert.deepEqual(gridSize(emptySearchSpace()), { problem: undefined })
    const random = { ...draft, mode: 'random' as const, swept: ['fast', 'slow'], samples: '200', seed: '7', ranges: { fast: { min: '2', max: '50', step: '1' }, slow: { min: '20', max: '200', step: '' } } }
    assert.deepEqual(searchSpaceBody(random), { random: { samples: 200, seed: 7, space: { fast: { min: 2, max: 50, step: 1 }, slow: { min: 20, max: 200 } } } })
    assert.deepEqual(gridSize(random), { count: 200 })
    assert.throws(() => searchSpaceBody({ ...random, swept: ['fast', 'allow_short'] }), /allow_short: a switch is swept in a grid only/)
    assert.throws(() => searchSpaceBody({ ...random, ranges: { ...random.ranges, slow: { min: '', max: '9', step: '' } } }), /slow: give a minimum and a maximum/)
  })

  it('maps two params against the objective: the best run of each cell, the first on a tie, undefined metrics left out', () => {
    const runs = [
      run(1, { fast: 5, slow: 30, stop: 1 }, '0.5'),
      run(2, { fast: 5, slow: 30, stop: 2 }, '0.9'),
      run(3, { fast: 5, slow: 30, stop: 3 }, '0.9'),
      run(4, { fast: 10, slow: 30, stop: 1 }, null),
      run(5, { fast: 10, slow: 50, stop: 1 }, '-0.2'),
      run(6, { fast: 40, slow: 50, stop: 1 }, '1.5'),
    ]
    const map = heatCells(runs, 'fast', 'slow', 'sharpe')
    assert.deepEqual([map.xs, map.ys], [['5', '10', '40'], ['30', '50']], 'numeric order, not text order')
    assert.deepEqual(
      map.cells.map((c) => [map.xs[c.x], map.ys[c.y], c.value, c.id]).sort(),
      [['10', '50', -0.2, 'r5'], ['40', '50', 1.5, 'r6'], ['5', '30', 0.9, 'r2']].sort(),
    )
    // fast 40 × slow 30 and fast 5 × slow 50 have no run (skipped); fast 10 × slow 30 has one without a Sharpe: the legend says both (issue 35).
    assert.deepEqual(map.blank, { unrun: 2, undefined: 1 })
    assert.equal(
      blankCellsText(map.blank, 'grid', 'Sharpe'),
      'Blank: 2 cells with no run: the template refuses those values together, so the sweep skipped them; 1 cell whose runs have no Sharpe (a run that never traded has none).',
    )
    assert.equal(blankCellsText({ unrun: 3, undefined: 0 }, 'random', 'Sharpe'), 'Blank: 3 cells with no run: no random draw landed there.')
    assert.equal(blankCellsText({ unrun: 0, undefined: 0 }, 'grid', 'Sharpe'), null)
    const oneRow = heatCells(runs, 'stop', null, 'sharpe')
    assert.deepEqual(oneRow.ys, ['all'])
    assert.deepEqual(oneRow.cells.map((c) => [oneRow.xs[c.x], c.id]).sort(), [['1', 'r6'], ['2', 'r2'], ['3', 'r3']])
  })

  it('bins a random search\'s many values into 12 ranges per axis', () => {
    const runs = Array.from({ length: 200 }, (_, i) => run(i + 1, { a: (i * 7.3) % 100, b: (i * 3.1) % 10 }, String(i)))
    const map = heatCells(runs, 'a', 'b', 'sharpe')
    assert.equal(map.xs.length, 12)
    assert.equal(map.ys.length, 12)
    const bin = (values: number[], v: number) => {
      const lo = Math.min(...values)
      return Math.min(11, Math.floor((v - lo) / ((Math.max(...values) - lo) / 12)))
    }
    const as = runs.map((r) => r.params.a as number)
    const bs = runs.map((r) => r.params.b as number)
    const best = new Map<string, number>()
    for (const r of runs) {
      const key = `${bin(as, r.params.a as number)}:${bin(bs, r.params.b as number)}`
      best.set(key, Math.max(best.get(key) ?? -Infinity, Number(r.metrics.sharpe)))
    }
    assert.deepEqual(new Map(map.cells.map((c) => [`${c.x}:${c.y}`, c.value])), best)
    assert.equal(Math.max(...map.cells.map((c) => c.value)), 199, 'the best run is in some cell')
  })

  it('sorts runs by a metric or a param, undefined values last in either direction, ties in run order', () => {
    const runs = [run(1, { fast: 10 }, '0.5'), run(2, { fast: 5 }, null), run(3, { fast: 5 }, '1.2'), run(4, { fast: 20 }, '0.5')]
    assert.deepEqual(sortRuns(runs, { key: 'sharpe', descending: true }).map((r) => r.run_id), ['r3', 'r1', 'r4', 'r2'])
    assert.deepEqual(sortRuns(runs, { key: 'sharpe', descending: false }).map((r) => r.run_id), ['r1', 'r4', 'r3', 'r2'])
    assert.deepEqual(sortRuns(runs, { key: 'param.fast', descending: false }).map((r) => r.run_id), ['r2', 'r3', 'r1', 'r4'])
  })

  it('rebuilds a run\'s equity from its column of the returns matrix', () => {
    const returns = { run_ids: ['r1', 'r2'], dates: ['2024-01-02T00:00:00.000Z', '2024-01-03T00:00:00.000Z', '2024-01-04T00:00:00.000Z'], returns: [[0.1, 0], [-0.5, 0.01], [1, 0.02]] }
    const points = equityFromReturns(returns, 'r1', 1000)!
    assert.deepEqual(points.map((p) => p.value), [1000, 1100, 550, 1100])
    assert.deepEqual(points.map((p) => new Date(p.time * 1000).toISOString().slice(0, 10)), ['2024-01-01', '2024-01-02', '2024-01-03', '2024-01-04'])
    assert.equal(equityFromReturns(returns, 'r9', 1000), undefined)
  })
})
