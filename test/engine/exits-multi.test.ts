import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { feeRates } from '../../src/engine/fees.js'
import { simulateMulti } from '../../src/engine/simulate.js'
import type { BarSeries, DetailBars, ExitRules } from '../../src/engine/types.js'
import type { MultiSymbolSignal } from '../../src/templates/types.js'
import { HOUR, LOOSE_RULES, MINUTE, NO_FUNDING, aggregate, barsFromRows } from './helpers.js'

// Many-symbol runs follow the single-symbol rules per symbol. Capital 1000, leverage 1, no fees.
const START = Date.UTC(2024, 2, 1)
const N = Number.NaN
type Row = readonly [number, number, number, number]
const FLAT: Row = [100, 100, 100, 100]

/** Targets (and levels: [stop, take] per symbol) stated at given steps. */
class StepSchedule implements MultiSymbolSignal {
  readonly levels: Float64Array | undefined
  private step = 0
  constructor(
    private readonly targets: ReadonlyMap<number, readonly number[]>,
    private readonly stated?: ReadonlyMap<number, readonly number[]>,
  ) {
    this.levels = stated ? new Float64Array(4) : undefined
  }
  onStep(_at: Int32Array, targets: Float64Array): boolean {
    const step = this.step++
    this.stated?.get(step)?.forEach((level, k) => (this.levels![k] = level))
    const row = this.targets.get(step)
    if (row === undefined) return false
    row.forEach((target, s) => (targets[s] = target))
    return true
  }
}

function run(bars: BarSeries[], signal: MultiSymbolSignal, exits: ExitRules, detail?: (DetailBars | undefined)[]) {
  const { ledger, guard } = simulateMulti(
    {
      bars,
      funding: bars.map(() => NO_FUNDING),
      rules: bars.map(() => LOOSE_RULES),
      capital: 1000,
      leverage: 1,
      fees: feeRates('none'),
      start: START,
      end: bars[0]!.openTime[bars[0]!.openTime.length - 1]!,
      exits,
      detail,
    },
    signal,
  )
  return { ledger, guard: guard! }
}

describe('protective exits in a many-symbol run', () => {
  const a = barsFromRows('BTCUSDT', START, HOUR, [FLAT, [100, 100.5, 97.5, 99], ...Array.from({ length: 4 }, (): Row => [99, 99.5, 98.5, 99])])
  const b = barsFromRows('ETHUSDT', START, HOUR, [FLAT, [100, 101, 99, 100.5], [100.5, 101, 99.4, 100], FLAT, FLAT, FLAT])
  const exits: ExitRules = { stopLoss: 0.02, trigger: 'last' }

  it('per symbol: a stop, the latch (a restated 0.5 does not re-enter, 0.3 does), a signal’s level, the counts', () => {
    // Step 0: half each, 5 at 100. A is stopped at 98 in bar 1; B keeps its derived stop 98 until the signal
    // states 99.5 at step 1, crossed in bar 2. A's 0.5 at steps 1 and 2 is the target in force: latched; 0.3 re-enters.
    const signal = new StepSchedule(
      new Map([[0, [0.5, 0.5]], [1, [0.5, N]], [2, [0.5, N]], [3, [0.3, N]]]),
      new Map([[1, [N, N, 99.5, N]]]),
    )
    const { ledger, guard } = run([a, b], signal, exits)
    const [stopA, stopB] = ledger.trades
    assert.equal(ledger.trades.length, 2)
    assert.equal(stopA!.symbol, 'BTCUSDT')
    assert.equal(stopA!.exitReason, 'stop_loss')
    assert.equal(stopA!.exitPrice, 98)
    assert.equal(stopA!.exitTime, START + 2 * HOUR - 1)
    assert.equal(stopB!.symbol, 'ETHUSDT')
    assert.equal(stopB!.exitReason, 'stop_loss')
    assert.equal(stopB!.exitPrice, 99.5)
    assert.equal(stopB!.exitTime, START + 3 * HOUR - 1)
    // A re-entered at bar 4's open (99) with 0.3 of equity 1000 − 10 − 2.5 = 987.5: floor_0.001(987.5 × 0.3 / 99) = 2.992.
    assert.equal(ledger.qty[0], 2.992)
    assert.equal(ledger.tripEntryTime[0], START + 4 * HOUR)
    assert.equal(ledger.qty[1], 0)
    assert.deepEqual(guard.resolution(), { BTCUSDT: { '1h': 3 }, ETHUSDT: { '1h': 2 } })
  })

  it('each symbol is examined on its own finest bars', () => {
    const minutes = (symbol: string, dip: number) =>
      barsFromRows(symbol, START, MINUTE, Array.from({ length: 45 }, (_, m): Row => (m === dip ? [100, 100.5, 97.5, 99] : FLAT)))
    const a1 = minutes('BTCUSDT', 20)
    const b1 = minutes('ETHUSDT', 22)
    const bars = [aggregate(a1, 15 * MINUTE), aggregate(b1, 15 * MINUTE)]
    const { ledger, guard } = run(bars, new StepSchedule(new Map([[0, [0.5, 0.5]]])), exits, [{ bars: [a1] }, undefined])
    const bySymbol = new Map(ledger.trades.map((t) => [t.symbol, t]))
    assert.equal(bySymbol.get('BTCUSDT')!.exitTime, START + 21 * MINUTE - 1, 'in its 1m bar')
    assert.equal(bySymbol.get('ETHUSDT')!.exitTime, START + 30 * MINUTE - 1, 'at its quarter’s close')
    assert.deepEqual(guard.resolution(), { BTCUSDT: { '1m': 1 }, ETHUSDT: { '15m': 1 } })
  })
})
