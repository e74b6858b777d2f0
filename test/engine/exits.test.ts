import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MissingMarkBars } from '../../src/engine/exit-guard.js'
import { feeRates } from '../../src/engine/fees.js'
import { simulateSingle } from '../../src/engine/simulate.js'
import type { BarSeries, DetailBars, ExitRules, Trade } from '../../src/engine/types.js'
import type { SingleSymbolSignal } from '../../src/templates/types.js'
import { HOUR, LOOSE_RULES, MINUTE, NO_FUNDING, ScheduleSignal, aggregate, barsFromRows, random, randomWalk, withoutBars } from './helpers.js'

// Hand-computed protective exits. Capital 1000, leverage 1, no fees: an all-in order at 100 buys 10.
const START = Date.UTC(2024, 2, 1)
const QUARTER = 15 * MINUTE
const at = (minute: number) => START + minute * MINUTE
/** The close time of the 1m bar `minute`. */
const closeOf = (minute: number) => at(minute + 1) - 1
type Row = readonly [number, number, number, number]

interface Options {
  exits?: ExitRules
  detail?: DetailBars
  slippageBps?: number
  leverage?: number
  signal?: SingleSymbolSignal
}

function run(bars: BarSeries, schedule: [number, number][], options: Options) {
  const simulation = simulateSingle(
    {
      bars: [bars],
      funding: [NO_FUNDING],
      rules: [LOOSE_RULES],
      capital: 1000,
      leverage: options.leverage ?? 1,
      fees: feeRates('none'),
      start: bars.openTime[0]!,
      end: bars.openTime[bars.openTime.length - 1]!,
      exits: options.exits,
      slippageBps: options.slippageBps,
      detail: options.detail ? [options.detail] : undefined,
    },
    options.signal ?? new ScheduleSignal(new Map(schedule)),
  )
  const { ledger, guard } = simulation
  return { trades: ledger.trades, ledger, resolution: guard?.resolution().BTCUSDT, ambiguous: guard?.ambiguous[0] }
}

/** Hourly strategy bars from rows. */
const hours = (rows: readonly Row[]) => barsFromRows('BTCUSDT', START, HOUR, rows)

/** 1m bars flat at 100, but for the rows given by minute; `count` minutes from START. */
function minutes(count: number, rows: Record<number, Row>): BarSeries {
  return barsFromRows('BTCUSDT', START, MINUTE, Array.from({ length: count }, (_, m) => rows[m] ?? [100, 100, 100, 100]))
}

/** A 15m strategy over 1m bars: the quarters (aggregated) and the 1m bars as its detail. */
function quarters(m1: BarSeries) {
  return { bars: aggregate(m1, QUARTER), detail: { bars: [m1] } }
}

const close = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 1e-9, `${what}: ${actual} ≠ ${expected}`)

function assertTrade(trade: Trade | undefined, expected: Partial<Trade>) {
  assert.ok(trade, 'a trade')
  for (const [key, value] of Object.entries(expected)) {
    if (typeof value === 'number') close(trade[key as keyof Trade] as number, value, key)
    else assert.equal(trade[key as keyof Trade], value, key)
  }
}

const LONG: [number, number][] = [[0, 1]]
const SHORT: [number, number][] = [[0, -1]]
const FLAT: Row = [100, 100, 100, 100]

describe('protective exits on the strategy bar itself', () => {
  it('a move through the stop fills at the stop, stamped at the bar close (long and short)', () => {
    // Long 10 at 100; stop 2 % = 98.0; bar 1's low 97.5 crosses it.
    const long = run(hours([FLAT, [100, 101, 97.5, 99], [99, 99, 99, 99]]), LONG, { exits: { stopLoss: 0.02, trigger: 'last' } })
    assert.equal(long.trades.length, 1)
    assertTrade(long.trades[0], { side: 'buy', entryPrice: 100, exitPrice: 98, exitTime: START + 2 * HOUR - 1, qty: 10, pnl: -20, exitReason: 'stop_loss' })
    assert.deepEqual(long.resolution, { '1h': 1 }, 'one strategy bar examined, on itself')
    assert.equal(long.ambiguous, 0)
    // Short 10 at 100; stop 102.0; bar 1's high 102.5 crosses it.
    const short = run(hours([FLAT, [100, 102.5, 99.5, 101], [101, 101, 101, 101]]), SHORT, { exits: { stopLoss: 0.02, trigger: 'last' } })
    assertTrade(short.trades[0], { side: 'sell', exitPrice: 102, exitTime: START + 2 * HOUR - 1, pnl: -20, exitReason: 'stop_loss' })
  })

  it('a move through the target fills at the target, never better (long and short)', () => {
    const long = run(hours([FLAT, [100, 103.5, 99.5, 103], FLAT]), LONG, { exits: { takeProfit: 0.03, trigger: 'last' } })
    assertTrade(long.trades[0], { exitPrice: 103, exitTime: START + 2 * HOUR - 1, pnl: 30, exitReason: 'take_profit' })
    const short = run(hours([FLAT, [100, 100.5, 96.5, 97], FLAT]), SHORT, { exits: { takeProfit: 0.03, trigger: 'last' } })
    assertTrade(short.trades[0], { exitPrice: 97, pnl: 30, exitReason: 'take_profit' })
  })

  it('a gap through the stop fills at the open, worse than the stop (long and short)', () => {
    const long = run(hours([FLAT, [100, 100.5, 99.5, 100], [96, 97, 95, 96.5], FLAT]), LONG, { exits: { stopLoss: 0.02, trigger: 'last' } })
    assertTrade(long.trades[0], { exitPrice: 96, exitTime: START + 2 * HOUR, pnl: -40, exitReason: 'stop_loss' })
    const short = run(hours([FLAT, [100, 100.5, 99.5, 100], [104, 105, 103, 104], FLAT]), SHORT, { exits: { stopLoss: 0.02, trigger: 'last' } })
    assertTrade(short.trades[0], { exitPrice: 104, exitTime: START + 2 * HOUR, pnl: -40, exitReason: 'stop_loss' })
  })

  it('a gap through the target fills at the open, better than the target (long and short)', () => {
    const long = run(hours([FLAT, [100, 100.5, 99.5, 100], [105, 106, 104, 105], FLAT]), LONG, { exits: { takeProfit: 0.03, trigger: 'last' } })
    assertTrade(long.trades[0], { exitPrice: 105, exitTime: START + 2 * HOUR, pnl: 50, exitReason: 'take_profit' })
    const short = run(hours([FLAT, [100, 100.5, 99.5, 100], [95, 96, 94, 95], FLAT]), SHORT, { exits: { takeProfit: 0.03, trigger: 'last' } })
    assertTrade(short.trades[0], { exitPrice: 95, exitTime: START + 2 * HOUR, pnl: 50, exitReason: 'take_profit' })
  })

  it('a stop and a target inside one bar: the stop wins and is counted (long and short)', () => {
    const exits: ExitRules = { stopLoss: 0.02, takeProfit: 0.02, trigger: 'last' }
    const long = run(hours([FLAT, [100, 102.5, 97.5, 100], FLAT]), LONG, { exits })
    assertTrade(long.trades[0], { exitPrice: 98, exitReason: 'stop_loss' })
    assert.equal(long.ambiguous, 1)
    const short = run(hours([FLAT, [100, 102.5, 97.5, 100], FLAT]), SHORT, { exits })
    assertTrade(short.trades[0], { exitPrice: 102, exitReason: 'stop_loss' })
    assert.equal(short.ambiguous, 1)
  })

  it('levels are rounded to the tick away from the price: never kinder than the fraction', () => {
    // Entry 100.3: stop 2 % = 98.294 → 98.2 (down), target 3 % = 103.309 → 103.4 (up); a high of 103.35 is not enough.
    const rows: Row[] = [[100.3, 100.3, 100.3, 100.3], [100.3, 103.35, 98.25, 100], [100, 103.4, 99, 103]]
    const long = run(barsFromRows('BTCUSDT', START, HOUR, rows), LONG, { exits: { stopLoss: 0.02, takeProfit: 0.03, trigger: 'last' } })
    assertTrade(long.trades[0], { entryPrice: 100.3, exitPrice: 103.4, exitTime: START + 3 * HOUR - 1, exitReason: 'take_profit' })
    // Short at 100.3: stop 102.306 → 102.4 (up), target 97.291 → 97.2 (down).
    const shortRows: Row[] = [[100.3, 100.3, 100.3, 100.3], [100.3, 102.35, 97.25, 100], [100, 102.4, 99, 101]]
    const short = run(barsFromRows('BTCUSDT', START, HOUR, shortRows), SHORT, { exits: { stopLoss: 0.02, takeProfit: 0.03, trigger: 'last' } })
    assertTrade(short.trades[0], { exitPrice: 102.4, exitTime: START + 3 * HOUR - 1, exitReason: 'stop_loss' })
  })
})

describe('protective exits resolved on finer bars', () => {
  it('a stop and a target inside one 1m bar: the stop wins and is counted', () => {
    const { bars, detail } = quarters(minutes(45, { 20: [100, 102.5, 97.5, 100] }))
    const result = run(bars, LONG, { exits: { stopLoss: 0.02, takeProfit: 0.02, trigger: 'last' }, detail })
    assertTrade(result.trades[0], { entryTime: at(15), exitPrice: 98, exitTime: closeOf(20), exitReason: 'stop_loss' })
    assert.equal(result.ambiguous, 1)
    assert.deepEqual(result.resolution, { '1m': 1 })
  })

  it('the same strategy bar on 1m bars: the target’s 1m bar comes first, so the target wins, uncounted', () => {
    const m1 = minutes(45, { 18: [100, 102.5, 99.5, 102], 22: [100, 100.5, 97.5, 98] })
    const { bars, detail } = quarters(m1)
    const exits: ExitRules = { stopLoss: 0.02, takeProfit: 0.02, trigger: 'last' }
    const fine = run(bars, LONG, { exits, detail })
    assertTrade(fine.trades[0], { exitPrice: 102, exitTime: closeOf(18), pnl: 20, exitReason: 'take_profit' })
    assert.equal(fine.ambiguous, 0)
    // On the quarter alone (high 102.5, low 97.5) the order is unknown: the stop, counted.
    const coarse = run(bars, LONG, { exits })
    assertTrade(coarse.trades[0], { exitPrice: 98, exitTime: at(30) - 1, exitReason: 'stop_loss' })
    assert.equal(coarse.ambiguous, 1)
    assert.deepEqual(coarse.resolution, { '15m': 1 })
  })

  it('the finest series covering the whole strategy bar: 1m, else 5m, else the strategy bar itself, counted', () => {
    const exits: ExitRules = { stopLoss: 0.05, trigger: 'last' }
    // 1m lacks minute 35 (quarter 2) and 50 (quarter 3); 5m lacks its bar at minute 45 (quarter 3).
    const detailOf = (m1: BarSeries): DetailBars => ({ bars: [withoutBars(aggregate(m1, 5 * MINUTE), [at(45)]), withoutBars(m1, [at(35), at(50)])] })
    const late = minutes(60, { 52: [100, 100.5, 94, 95] })
    const lateRun = run(aggregate(late, QUARTER), LONG, { exits, detail: detailOf(late) })
    assert.deepEqual(lateRun.resolution, { '1m': 1, '5m': 1, '15m': 1 })
    assertTrade(lateRun.trades[0], { exitPrice: 95, exitTime: at(60) - 1, exitReason: 'stop_loss' })
    // The same fall in quarter 2 is found in the 5m bar [35, 40).
    const middle = minutes(60, { 37: [100, 100.5, 94, 95] })
    const middleRun = run(aggregate(middle, QUARTER), LONG, { exits, detail: detailOf(middle) })
    assert.deepEqual(middleRun.resolution, { '1m': 1, '5m': 1 })
    assertTrade(middleRun.trades[0], { exitPrice: 95, exitTime: at(40) - 1 })
  })

  it('a position opened at a strategy bar’s open is protected from that open on (long and short)', () => {
    const long = quarters(minutes(45, { 15: [100, 100.5, 97.5, 98.5] }))
    assertTrade(run(long.bars, LONG, { exits: { stopLoss: 0.02, trigger: 'last' }, detail: long.detail }).trades[0], {
      entryTime: at(15),
      exitPrice: 98,
      exitTime: closeOf(15),
      exitReason: 'stop_loss',
    })
    const short = quarters(minutes(45, { 15: [100, 102.5, 99.5, 101] }))
    assertTrade(run(short.bars, SHORT, { exits: { stopLoss: 0.02, trigger: 'last' }, detail: short.detail }).trades[0], {
      exitPrice: 102,
      exitTime: closeOf(15),
    })
  })
})

describe('trailing stops', () => {
  it('long without activation: trails from the entry; the best price moves after each bar’s check', () => {
    // best 100 → after minute 15: 101, trail 98.9 → minute 16's low 99 holds, then best 105, trail 102.9 → minute 17's low 102 exits.
    // Raised before the check, minute 16 would have exited at 102.9 already.
    const { bars, detail } = quarters(minutes(45, { 15: [100, 101, 99.5, 100.5], 16: [100.5, 105, 99, 104], 17: [104, 104.5, 102, 102.5] }))
    const result = run(bars, LONG, { exits: { trailingStop: 0.02, trigger: 'last' }, detail })
    assertTrade(result.trades[0], { exitPrice: 102.9, exitTime: closeOf(17), pnl: 29, exitReason: 'trailing_stop' })
  })

  it('long with activation at +3 %: nothing trails until a bar’s high reaches 103, and that bar is not checked', () => {
    const m1 = minutes(45, { 15: [100, 101, 99.5, 100.5], 16: [100.5, 102, 97, 101], 17: [101, 105, 100, 104], 18: [104, 104.5, 102, 102.5] })
    const { bars, detail } = quarters(m1)
    const result = run(bars, LONG, { exits: { trailingStop: 0.02, trailingActivation: 0.03, trigger: 'last' }, detail })
    assertTrade(result.trades[0], { exitPrice: 102.9, exitTime: closeOf(18), exitReason: 'trailing_stop' })
    // Without activation the trail (98.9 after minute 15) catches minute 16's low of 97.
    const plain = run(bars, LONG, { exits: { trailingStop: 0.02, trigger: 'last' }, detail })
    assertTrade(plain.trades[0], { exitPrice: 98.9, exitTime: closeOf(16), exitReason: 'trailing_stop' })
  })

  it('short without and with activation, mirrored', () => {
    // best 100 → 99 after minute 15 (trail 100.98 → 101.0) → minute 16's high 100.9 holds; best 95, trail 96.9 → minute 17's high 98 exits.
    const m1 = minutes(45, { 15: [100, 100.5, 99, 99.5], 16: [99.5, 100.9, 95, 96], 17: [96, 98, 95.5, 97.5] })
    const { bars, detail } = quarters(m1)
    const plain = run(bars, SHORT, { exits: { trailingStop: 0.02, trigger: 'last' }, detail })
    assertTrade(plain.trades[0], { side: 'sell', exitPrice: 96.9, exitTime: closeOf(17), pnl: 31, exitReason: 'trailing_stop' })
    // Activation at −3 % = 97: minute 16's low 95 activates it after its check, best 95: the same exit.
    const activated = run(bars, SHORT, { exits: { trailingStop: 0.02, trailingActivation: 0.03, trigger: 'last' }, detail })
    assertTrade(activated.trades[0], { exitPrice: 96.9, exitTime: closeOf(17) })
    // Activation at −6 % = 94: never reached, never trails.
    assert.equal(run(bars, SHORT, { exits: { trailingStop: 0.02, trailingActivation: 0.06, trigger: 'last' }, detail }).trades.length, 0)
  })

  it('two stop-side levels: the one nearer the open is crossed first', () => {
    // Stop 98.0 and a trail of 98.9 after minute 15: minute 16 falls through both; the trail is nearer the open.
    const { bars, detail } = quarters(minutes(45, { 15: [100, 101, 99.5, 100.5], 16: [100.5, 100.5, 97, 97.5] }))
    const result = run(bars, LONG, { exits: { stopLoss: 0.02, trailingStop: 0.02, trigger: 'last' }, detail })
    assertTrade(result.trades[0], { exitPrice: 98.9, exitTime: closeOf(16), exitReason: 'trailing_stop' })
    assert.equal(result.ambiguous, 0)
  })
})

describe('the liquidation price among the stop-side levels', () => {
  // 10× long 100 at 100: margin 1000, LP = (1000 − 10,000) / (100 × 0.004 − 100) = 90.36… → 90.4.
  const rows: Row[] = [FLAT, [100, 100.5, 99.5, 100], [99, 99.5, 85, 86], FLAT]
  it('a liquidation price nearer the open than the stop wins (long and short)', () => {
    const far = run(hours(rows), LONG, { exits: { stopLoss: 0.12, trigger: 'last' }, leverage: 10 })
    assertTrade(far.trades[0], { qty: 100, exitPrice: 90.4, exitTime: START + 3 * HOUR - 1, exitReason: 'liquidation' })
    const near = run(hours(rows), LONG, { exits: { stopLoss: 0.05, trigger: 'last' }, leverage: 10 })
    assertTrade(near.trades[0], { exitPrice: 95, exitReason: 'stop_loss' })
    // 10× short 100 at 100: LP = (1000 + 10,000) / (100 × 0.004 + 100) = 109.56… → 109.5, nearer than a 12 % stop at 112.
    const short = run(hours([FLAT, [100, 100.5, 99.5, 100], [101, 115, 100.5, 114], FLAT]), SHORT, { exits: { stopLoss: 0.12, trigger: 'last' }, leverage: 10 })
    assertTrade(short.trades[0], { exitPrice: 109.5, exitReason: 'liquidation' })
  })

  it('an open past the liquidation price still liquidates at that price', () => {
    const result = run(hours([FLAT, [100, 100.5, 99.5, 100], [85, 86, 84, 85], FLAT]), LONG, { exits: { stopLoss: 0.05, trigger: 'last' }, leverage: 10 })
    assertTrade(result.trades[0], { exitPrice: 90.4, exitTime: START + 2 * HOUR, exitReason: 'liquidation' })
  })
})

describe('the latch after a protective exit', () => {
  // Stopped out in bar 1 (98), then flat bars at 98.5.
  const rows: Row[] = [FLAT, [100, 100.5, 97.5, 98.5], ...Array.from({ length: 5 }, (): Row => [98.5, 99, 98, 98.5])]
  const exits: ExitRules = { stopLoss: 0.02, trigger: 'last' }
  const every = (value: number, overrides: [number, number][] = []): [number, number][] => {
    const schedule = new Map(Array.from({ length: 7 }, (_, i): [number, number] => [i, value]))
    for (const [i, target] of overrides) schedule.set(i, target)
    return [...schedule]
  }

  it('a signal that keeps answering 1 does not re-enter', () => {
    const result = run(hours(rows), every(1), { exits })
    assert.equal(result.trades.length, 1)
    assert.equal(result.trades[0]!.exitReason, 'stop_loss')
    assert.equal(result.ledger.qty[0], 0)
  })

  it('a different target releases it: 0.5 re-enters at the next open', () => {
    const result = run(hours(rows), every(1, [[3, 0.5], [4, 0.5], [5, 0.5]]), { exits })
    assert.equal(result.trades.length, 1)
    // Cash 980 after the stop: floor_0.001(980 × 0.5 / 98.5) = 4.974, bought at bar 4's open.
    assert.equal(result.ledger.qty[0], 4.974)
    assert.equal(result.ledger.tripEntryTime[0], START + 4 * HOUR)
  })

  it('short: a signal that keeps answering −1 does not re-enter; 1 reverses the latch into a long', () => {
    const shortRows: Row[] = [FLAT, [100, 102.5, 99.5, 101.5], ...Array.from({ length: 5 }, (): Row => [101.5, 102, 101, 101.5])]
    const kept = run(hours(shortRows), every(-1), { exits })
    assert.equal(kept.trades.length, 1)
    assertTrade(kept.trades[0], { side: 'sell', exitPrice: 102, exitReason: 'stop_loss' })
    assert.equal(kept.ledger.qty[0], 0)
    const turned = run(hours(shortRows), every(-1, [[4, 1], [5, 1], [6, 1]]), { exits })
    assert.equal(turned.ledger.tripEntryTime[0], START + 5 * HOUR)
    assert.ok(turned.ledger.qty[0]! > 0)
  })

  it('0 releases it and stays flat; a 1 after that enters', () => {
    const result = run(hours(rows), every(1, [[3, 0]]), { exits })
    assert.equal(result.ledger.tripEntryTime[0], START + 5 * HOUR, 'bar 4 states 1 again: bought at bar 5')
    assert.equal(result.ledger.qty[0], 9.949)
  })
})

/** A signal stating [target, stop, take profit] at given bars (NaN = keep), bar by bar or for a run of bars (onBars). */
class LevelSignal implements SingleSymbolSignal {
  readonly levels = new Float64Array(2)
  constructor(private readonly schedule: ReadonlyMap<number, readonly [number, number, number]>) {}
  onBar(i: number): number {
    const stated = this.schedule.get(i)
    if (stated === undefined) return Number.NaN
    this.levels[0] = stated[1]
    this.levels[1] = stated[2]
    return stated[0]
  }
}

class BatchLevelSignal extends LevelSignal {
  onBars(from: number, to: number, targets: Float64Array, levels?: Float64Array): void {
    for (let i = from; i < to; i++) {
      this.levels.fill(Number.NaN)
      targets[i - from] = this.onBar(i)
      levels![2 * (i - from)] = this.levels[0]!
      levels![2 * (i - from) + 1] = this.levels[1]!
    }
  }
}

describe('levels stated by the signal', () => {
  const N = Number.NaN
  const both = (bars: BarSeries, schedule: [number, readonly [number, number, number]][], exits?: ExitRules) => {
    const one = run(bars, [], { signal: new LevelSignal(new Map(schedule)), ...(exits ? { exits } : {}) })
    const batch = run(bars, [], { signal: new BatchLevelSignal(new Map(schedule)), ...(exits ? { exits } : {}) })
    assert.deepEqual(batch.trades, one.trades, 'bar by bar and for a run of bars alike')
    return one
  }

  it('a stop moved up at a close is in force from the next bar (a breakeven stop)', () => {
    const bars = hours([FLAT, [100, 101, 96, 100.5], [100.5, 101, 98.5, 99], FLAT])
    // Stop 95 with the entry; bar 1's low 96 holds; moved to 99 at its close; bar 2's low 98.5 crosses it.
    const result = both(bars, [[0, [1, 95, N]], [1, [N, 99, N]]])
    assertTrade(result.trades[0], { exitPrice: 99, exitTime: START + 3 * HOUR - 1, exitReason: 'stop_loss' })
    assert.deepEqual(result.resolution, { '1h': 2 })
  })

  it('a level replaces the derived level of its side while set; 0 removes it and the derived one is back', () => {
    const bars = hours([FLAT, [100, 100.5, 97.5, 100], [100, 100.5, 96, 99], [99, 99.5, 94, 95], FLAT])
    // Config stop 95; the module's 97 replaces it (bar 1's low 97.5 holds), then is removed: bar 2's low 96 holds, bar 3's 94 exits at 95.
    const exits: ExitRules = { stopLoss: 0.05, trigger: 'last' }
    const removed = both(bars, [[0, [1, 97, N]], [1, [N, 0, N]]], exits)
    assertTrade(removed.trades[0], { exitPrice: 95, exitTime: START + 4 * HOUR - 1 })
    const kept = both(bars, [[0, [1, 97, N]]], exits)
    assertTrade(kept.trades[0], { exitPrice: 97, exitTime: START + 3 * HOUR - 1 })
  })

  it('a level already on the wrong side of the close it is stated at exits at the next open (long and short, stop and target)', () => {
    const bars = hours([FLAT, [100, 100.5, 99.5, 100], [100, 100.5, 99.5, 100], [101, 101.5, 100.5, 101], FLAT])
    const stop = both(bars, [[0, [1, 95, N]], [2, [N, 100.5, N]]])
    assertTrade(stop.trades[0], { exitPrice: 101, exitTime: START + 3 * HOUR, exitReason: 'stop_loss' })
    const target = both(bars, [[0, [1, N, N]], [2, [N, N, 99.5]]])
    assertTrade(target.trades[0], { exitPrice: 101, exitTime: START + 3 * HOUR, exitReason: 'take_profit' })
    const short = both(bars, [[0, [-1, 105, N]], [2, [N, 99.5, N]]])
    assertTrade(short.trades[0], { side: 'sell', exitPrice: 101, exitTime: START + 3 * HOUR, exitReason: 'stop_loss' })
  })

  it('levels belong to the position the target leaves: a reversal drops the old ones, a stated price is rounded away', () => {
    const bars = hours([FLAT, [100, 100.5, 99.5, 100], [100, 100.5, 98.9, 99], [99, 106, 98, 104], FLAT])
    // Long with stop 98.95 → 98.9 (rounded down); bar 2's low 98.9 touches it.
    const long = both(bars, [[0, [1, 98.95, N]]])
    assertTrade(long.trades[0], { exitPrice: 98.9, exitTime: START + 3 * HOUR - 1 })
    // Long with stop 95, reversed at bar 1's close into a short without levels: nothing protects the short.
    const reversed = both(bars, [[0, [1, 95, N]], [1, [-1, N, N]]])
    assert.equal(reversed.trades.length, 1)
    assert.equal(reversed.trades[0]!.exitReason, 'signal')
    assert.equal(reversed.ledger.qty[0]! < 0, true)
  })
})

describe('levels stated by the signal, at random', () => {
  it('a run of bars equals bar by bar, with levels stated rarely, often or never (quiet bars are skimmed while the guard is idle)', () => {
    const N = Number.NaN
    for (const [seed, rate] of [[1, 0], [2, 0.01], [3, 0.05], [4, 0.3]] as const) {
      const next = random(seed)
      const m1 = randomWalk('BTCUSDT', seed, 40 * 24 * 60, START, MINUTE, 100, 0.004, 300)
      const { bars, detail } = quarters(m1)
      const schedule = new Map<number, readonly [number, number, number]>()
      for (let i = 0; i < bars.openTime.length; i++) {
        const target = next() < 0.03 ? [1, -1, 0, 0.5][Math.floor(next() * 4)]! : N
        const stating = next() < rate
        if (!stating && target !== target) continue
        const close = bars.close[i]!
        // A level near the close on either side (some on the wrong side: exits at the next open), a removal, or none.
        const level = () => (next() < 0.2 ? 0 : close * (1 + (next() - 0.5) * 0.04))
        schedule.set(i, [target, stating && next() < 0.7 ? level() : N, stating && next() < 0.5 ? level() : N])
      }
      const one = run(bars, [], { signal: new LevelSignal(schedule), detail })
      const batch = run(bars, [], { signal: new BatchLevelSignal(schedule), detail })
      assert.ok(one.trades.length > 20, `seed ${seed}: the schedule trades (${one.trades.length}, ${schedule.size} statements, ${bars.openTime.length} bars)`)
      assert.deepEqual(batch.trades, one.trades, `seed ${seed}`)
      assert.equal(batch.ledger.cash, one.ledger.cash)
      assert.deepEqual(batch.resolution, one.resolution)
      if (rate > 0) assert.ok(one.trades.some((t) => t.exitReason !== 'signal'), `seed ${seed}: levels filled`)
    }
  })
})

describe('slippage', () => {
  const slippageBps = 10
  it('worsens an entry and a target change, sized as without it', () => {
    const bars = hours([FLAT, FLAT, FLAT, FLAT, FLAT])
    const result = run(bars, [[0, 1], [1, 0.5], [2, 0]], { slippageBps })
    // Buy 10 at 100.1; at bar 2 equity 1000 + 10 × (100 − 100.1) = 999 → 4.995 held, 5.005 sold at 99.9; the rest at bar 3, 99.9.
    assertTrade(result.trades[0], { entryPrice: 100.1, exitPrice: 99.9, qty: 10, pnl: -2, exitReason: 'signal' })
  })

  it('worsens each protective exit (long sells lower, short buys higher)', () => {
    const exits = (more: Partial<ExitRules>): ExitRules => ({ trigger: 'last', ...more })
    // Entry 100.1: stop 98.098 → 98.0, sold at 97.902.
    const stop = run(hours([FLAT, [100, 100.5, 97.5, 98], FLAT]), LONG, { exits: exits({ stopLoss: 0.02 }), slippageBps })
    assertTrade(stop.trades[0], { entryPrice: 100.1, exitPrice: 98 * 0.999, exitReason: 'stop_loss' })
    // Target 103.103 → 103.2, sold at 103.0968.
    const take = run(hours([FLAT, [100, 104, 99.5, 103.5], FLAT]), LONG, { exits: exits({ takeProfit: 0.03 }), slippageBps })
    assertTrade(take.trades[0], { exitPrice: 103.2 * 0.999, exitReason: 'take_profit' })
    // Trailing from 100.1: 98.098 → 98.0.
    const trail = run(hours([FLAT, [100, 100.05, 97.5, 98], FLAT]), LONG, { exits: exits({ trailingStop: 0.02 }), slippageBps })
    assertTrade(trail.trades[0], { exitPrice: 98 * 0.999, exitReason: 'trailing_stop' })
    // A gap: the open 96, sold at 95.904.
    const gap = run(hours([FLAT, [100, 100.5, 99.5, 100], [96, 97, 95, 96], FLAT]), LONG, { exits: exits({ stopLoss: 0.02 }), slippageBps })
    assertTrade(gap.trades[0], { exitPrice: 96 * 0.999, exitTime: START + 2 * HOUR })
    // Short sold at 99.9: stop 101.898 → 101.9, bought back at 102.0019.
    const short = run(hours([FLAT, [100, 102.5, 99.5, 101], FLAT]), SHORT, { exits: exits({ stopLoss: 0.02 }), slippageBps })
    assertTrade(short.trades[0], { entryPrice: 99.9, exitPrice: 101.9 * 1.001, exitReason: 'stop_loss' })
  })

  it('leaves liquidations at the liquidation price', () => {
    // 10× long 100 at 100.1: margin 1001, LP = (1001 − 10,010) / (0.4 − 100) = 90.45… → 90.5.
    const rows: Row[] = [FLAT, [100, 100.5, 99.5, 100], [99, 99.5, 85, 86], FLAT]
    for (const exits of [undefined, { stopLoss: 0.2, trigger: 'last' as const }]) {
      const result = run(hours(rows), LONG, { ...(exits ? { exits } : {}), slippageBps, leverage: 10 })
      assertTrade(result.trades[0], { entryPrice: 100.1, exitPrice: 90.5, exitReason: 'liquidation' })
    }
  })
})

describe('trigger mark', () => {
  const exits: ExitRules = { stopLoss: 0.02, trigger: 'mark' }
  it('checks the levels against mark-price bars and fills at the level, or at the mark open on a gap', () => {
    const last = minutes(45, {})
    const bars = aggregate(last, QUARTER)
    // The mark dips to 97.8 in minute 20 while trades stay at 100: stopped at 98.
    const dip = run(bars, LONG, { exits, detail: { bars: [last], mark: [minutes(45, { 20: [100, 100.2, 97.8, 99] })] } })
    assertTrade(dip.trades[0], { exitPrice: 98, exitTime: closeOf(20), exitReason: 'stop_loss' })
    assert.deepEqual(dip.resolution, { mark_1m: 1 })
    // The mark opens minute 21 at 97: filled at that open.
    const gap = run(bars, LONG, { exits, detail: { mark: [minutes(45, { 20: [100, 100, 99, 99.5], 21: [97, 97.5, 96.5, 97] })] } })
    assertTrade(gap.trades[0], { exitPrice: 97, exitTime: at(21) })
    // Trades dip to 97 but the mark stays flat: no exit.
    const tradesOnly = aggregate(minutes(45, { 20: [100, 100, 97, 99.5] }), QUARTER)
    assert.equal(run(tradesOnly, LONG, { exits, detail: { mark: [minutes(45, {})] } }).trades.length, 0)
    // Short: the mark spikes to 102.3.
    const short = run(bars, SHORT, { exits, detail: { mark: [minutes(45, { 25: [100, 102.3, 99.9, 101] })] } })
    assertTrade(short.trades[0], { side: 'sell', exitPrice: 102, exitTime: closeOf(25), exitReason: 'stop_loss' })
  })

  it('mark bars as long as the strategy’s serve, counted as such', () => {
    const bars = aggregate(minutes(45, {}), QUARTER)
    const mark = aggregate(minutes(45, { 20: [100, 100.2, 97.8, 99] }), QUARTER)
    const result = run(bars, LONG, { exits, detail: { mark: [mark] } })
    assertTrade(result.trades[0], { exitPrice: 98, exitTime: at(30) - 1 })
    assert.deepEqual(result.resolution, { mark_15m: 1 })
  })

  it('without any mark-price bars for a symbol, fails rather than fall back to trade prices', () => {
    const last = minutes(45, {})
    assert.throws(
      () => run(aggregate(last, QUARTER), LONG, { exits, detail: { bars: [last] } }),
      (error: unknown) => error instanceof MissingMarkBars && error.symbol === 'BTCUSDT',
    )
  })
})
