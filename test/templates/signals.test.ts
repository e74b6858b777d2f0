import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { BarSeries, FundingSeries } from '../../src/engine/types.js'
import { findTemplate, TEMPLATES } from '../../src/templates/registry.js'
import type { MultiSymbolTemplate, SingleSymbolTemplate } from '../../src/templates/types.js'
import { BTCUSDT_RULES, HOUR, NO_FUNDING, barsFromCloses, barsFromRows, funding, random, randomBars, validParams } from '../engine/helpers.js'

const START = Date.UTC(2024, 0, 1)

/** Feeds a one-symbol template bar by bar; returns the targets it stated, by bar index. */
function signals(id: string, params: Record<string, unknown>, bars: BarSeries, events: FundingSeries = NO_FUNDING): Map<number, number> {
  const template = findTemplate(id) as SingleSymbolTemplate
  const signal = template.create({ bars: [bars], funding: [events], rules: [BTCUSDT_RULES] }, validParams(id, params) as never)
  const out = new Map<number, number>()
  for (let i = 0; i < bars.openTime.length; i++) {
    const target = signal.onBar(i)
    if (!Number.isNaN(target)) out.set(i, target)
  }
  return out
}

const closes = (...runs: [from: number, to: number, steps: number][]) => {
  const out: number[] = []
  for (const [from, to, steps] of runs) for (let k = 0; k < steps; k++) out.push(Math.round((from + ((to - from) * k) / Math.max(1, steps - 1)) * 10) / 10)
  return out
}

describe('sma_cross', () => {
  // fast 2, slow 3. Windows (a, b, c) with b + c = 2a have equal averages: an exact zero difference.
  const prices = [100.5, 100.3, 100.2, 100.1, 100.3, 100.4, 100.4, 100.6, 100.2, 100.0]
  // i=2: 100.25 vs 100.333 −, first nonzero: no cross.  i=3: 100.15 vs 100.2 −.
  // i=4: window (100.2, 100.1, 100.3): 100.2 vs 100.2, exactly 0: no cross, no reset.
  // i=5: 100.35 vs 100.267 +, previous nonzero − (i=3): cross up.   i=6: 100.4 vs 100.367 +.
  // i=7: window (100.4, 100.4, 100.6) 100.5 vs 100.467 +.  i=8: window (100.4, 100.6, 100.2): 100.4 vs 100.4, 0.
  // i=9: 100.1 vs 100.267 −, previous nonzero + (i=7): cross down.
  const bars = barsFromCloses('BTCUSDT', START, HOUR, prices)

  it('long only: long on the cross up, flat on the cross down; exact zeros neither cross nor reset', () => {
    assert.deepEqual([...signals('sma_cross', { fast: 2, slow: 3 }, bars)], [
      [5, 1],
      [9, 0],
    ])
  })

  it('allow_short: reverses on each cross', () => {
    assert.deepEqual([...signals('sma_cross', { fast: 2, slow: 3, allow_short: true }, bars)], [
      [5, 1],
      [9, -1],
    ])
  })

  it('a difference that returns to its sign through a zero is no cross', () => {
    // − (i=2), − (i=3), 0 (i=4), then − again: no signal at all.
    const flatThenDown = barsFromCloses('BTCUSDT', START, HOUR, [100.5, 100.3, 100.2, 100.1, 100.3, 99.0, 98.0])
    assert.deepEqual([...signals('sma_cross', { fast: 2, slow: 3 }, flatThenDown)], [])
  })
})

describe('sma_cross onBars', () => {
  it('states the targets onBar states, in runs of any length, over real-looking and awkward prices', () => {
    const next = random(4)
    const base = randomBars('BTCUSDT', 4, 6000, START, HOUR)
    // Some closes with more decimals after the warm-up: the averages change precision in the middle of a run.
    const close = Float64Array.from(base.close, (c, i) => (i > 3000 && i % 97 === 0 ? c + 0.0625 : c))
    const bars = { ...base, close }
    for (const allow_short of [false, true]) {
      const params = validParams('sma_cross', { fast: 7, slow: 25, allow_short }) as never
      const template = findTemplate('sma_cross') as SingleSymbolTemplate
      const one = template.create({ bars: [bars], funding: [NO_FUNDING], rules: [BTCUSDT_RULES] }, params)
      const expected = Array.from(close, (_, i) => one.onBar(i))
      const batch = template.create({ bars: [bars], funding: [NO_FUNDING], rules: [BTCUSDT_RULES] }, params)
      const got: number[] = []
      for (let from = 0; from < close.length; ) {
        const to = Math.min(close.length, from + 1 + Math.floor(next() * 500))
        const targets = new Float64Array(to - from)
        batch.onBars!(from, to, targets)
        got.push(...targets)
        from = to
      }
      assert.deepEqual(got, expected)
      assert.ok(expected.filter((x) => !Number.isNaN(x)).length > 50, 'enough crosses to compare')
    }
  })
})

describe('ema_cross and macd', () => {
  // Flat, down, up, down: the first nonzero difference (the fall) is not a cross; the rise and the fall after are.
  const bars = barsFromCloses('BTCUSDT', START, HOUR, closes([100, 100, 40], [100, 80, 20], [80, 130, 40], [130, 90, 40]))

  it('ema_cross: one cross up during the rise, one cross down during the last fall', () => {
    const found = [...signals('ema_cross', { fast: 5, slow: 20 }, bars)]
    assert.equal(found.length, 2, JSON.stringify(found))
    assert.equal(found[0]![1], 1)
    assert.ok(found[0]![0] >= 60 && found[0]![0] < 100, `cross up at ${found[0]![0]}`)
    assert.deepEqual(found[1]![1], 0)
    assert.ok(found[1]![0] >= 100, `cross down at ${found[1]![0]}`)
    const shorts = [...signals('ema_cross', { fast: 5, slow: 20, allow_short: true }, bars)]
    assert.deepEqual(shorts.map(([i, t]) => [i, t]), [found[0], [found[1]![0], -1]])
  })

  it('macd: long when the line crosses above the signal, closed when it crosses below', () => {
    // A sine wave: the histogram changes sign a few bars after each turn. (Straight ramps make the line
    // constant and the histogram ±0 noise.) Expected crosses come from a separate EMA computation.
    const wave = barsFromCloses('BTCUSDT', START, HOUR, Array.from({ length: 300 }, (_, k) => Math.round((1000 + 50 * Math.sin(k / 15)) * 10) / 10))
    const c = [...wave.close]
    const ema = (xs: number[], n: number) => {
      const out = xs.map(() => Number.NaN)
      const first = xs.findIndex((x) => !Number.isNaN(x))
      out[first + n - 1] = xs.slice(first, first + n).reduce((a, b) => a + b, 0) / n
      for (let k = first + n; k < xs.length; k++) out[k] = out[k - 1]! + (2 / (n + 1)) * (xs[k]! - out[k - 1]!)
      return out
    }
    const fast = ema(c, 12)
    const slow = ema(c, 26)
    const line = c.map((_, k) => fast[k]! - slow[k]!)
    const signalLine = ema(line, 9)
    const expected: [number, number][] = []
    let last = 0
    for (let k = 0; k < c.length; k++) {
      const sign = Math.sign(line[k]! - signalLine[k]!)
      if (!sign) continue
      if (last && sign !== last) expected.push([k, sign > 0 ? 1 : 0])
      last = sign
    }
    assert.ok(expected.length >= 4, JSON.stringify(expected))
    assert.deepEqual([...signals('macd', {}, wave)], expected)
  })
})

describe('rsi_reversion', () => {
  // A slide (RSI near 0), a rebound (RSI near 100), a slide again.
  const bars = barsFromCloses('BTCUSDT', START, HOUR, closes([100, 100, 5], [100, 80, 20], [80, 120, 20], [120, 90, 20]))
  const params = { period: 5, oversold: 30, overbought: 70, exit: 50 }

  it('long when RSI < oversold, flat once RSI ≥ exit', () => {
    const found = [...signals('rsi_reversion', params, bars)]
    // RSI is defined from bar 5 (five changes), all zero so far: 50. Bar 6 is the first fall: RSI 0 < 30 → long.
    // The rebound takes RSI through 50 → flat.
    assert.deepEqual(found[0], [6, 1])
    assert.equal(found[1]![1], 0)
    assert.ok(found[1]![0] > 24 && found[1]![0] < 45, JSON.stringify(found))
    // The last slide takes RSI below 30 again: long again.
    assert.equal(found[2]![1], 1)
  })

  it('allow_short: short when RSI > overbought, covered once RSI ≤ exit', () => {
    // RSI on these closes: 50 at bar 5, 0 from bar 6, 39 / 59 / 71 at bars 26–28 … 99, then 80, 65, 53, 42, 34, 27 at bars 46–51.
    assert.deepEqual([...signals('rsi_reversion', { ...params, allow_short: true }, bars)], [
      [6, 1], // RSI 0 < 30
      [27, 0], // 59 ≥ exit 50, not above 70: flat
      [28, -1], // 71 > 70: short
      [49, 0], // 42 ≤ 50, not below 30: covered
      [51, 1], // 27 < 30: long
    ])
  })
})

describe('bollinger_breakout', () => {
  // ±0.5 around 100, a jump to 105 (above the upper band), back to ±0.5 around 100, then a drop to 97.
  const calm = (n: number) => Array.from({ length: n }, (_, k) => (k % 2 === 0 ? 100.5 : 99.5))
  const bars = barsFromCloses('BTCUSDT', START, HOUR, [...calm(30), 105, ...calm(15), 97])

  it('long on a close above the upper band, flat below the middle band', () => {
    // Bar 30 (105) is far above 100 + 2 × 0.5. Bar 31 closes 100.5, below the middle (800 + 105 + 100.5) / 10 = 100.55.
    assert.deepEqual([...signals('bollinger_breakout', { period: 10, width: 2 }, bars)], [
      [30, 1],
      [31, 0],
    ])
  })

  it('allow_short: from flat, a close below the lower band goes short', () => {
    // Bar 46 (97): the window is ±0.5 around 100 again, lower band 99.
    assert.deepEqual([...signals('bollinger_breakout', { period: 10, width: 2, allow_short: true }, bars)], [
      [30, 1],
      [31, 0],
      [46, -1],
    ])
  })
})

describe('donchian_breakout', () => {
  const rows: number[][] = []
  for (let k = 0; k < 10; k++) rows.push([100, 101, 99, 100]) // channel 99–101
  rows.push([100, 103, 100, 102.5]) // 10: close 102.5 > highest high 101 of the previous 5 → long
  rows.push([102.5, 104, 102, 103.5]) // 11
  rows.push([103.5, 104, 101.5, 101.8]) // 12: lowest low of previous 3 bars (10–11: 100, 102; 9: 99) is 99: stays long
  rows.push([101.8, 102, 98, 98.5]) // 13: below the 3-bar low (lows of 10–12: 100): flat; also below the 5-bar low (99)
  rows.push([98.5, 99, 95, 96]) // 14
  const bars = barsFromRows('BTCUSDT', START, HOUR, rows)

  it('enters above the entry channel, exits below the exit channel (previous bars only)', () => {
    assert.deepEqual([...signals('donchian_breakout', { entry_period: 5, exit_period: 3 }, bars)], [
      [10, 1],
      [13, 0],
    ])
  })

  it('allow_short: a long exit that also breaks the entry channel reverses into a short', () => {
    assert.deepEqual([...signals('donchian_breakout', { entry_period: 5, exit_period: 3, allow_short: true }, bars)], [
      [10, 1],
      [13, -1],
    ])
  })
})

describe('funding_carry', () => {
  const bars = barsFromCloses('BTCUSDT', START, HOUR, Array.from({ length: 80 }, () => 100))
  // Events every 8 h at hh:00:00.001 (Binance's offsets): known at the close of the bar holding them.
  const rates = [0.0001, 0.0005, 0.0005, 0.0005, 0.00005, 0.00005, 0.00005, -0.0006, -0.0006, -0.0006]
  const events = funding(rates.map((rate, k) => ({ time: START + k * 8 * HOUR + 1, rate })))

  it('shorts a high average rate, closes when it fades, longs a deeply negative one', () => {
    // Event k settles at bar 8k. Averages of 3: after event 2 (bar 16): (0.0001 + 0.0005 + 0.0005) / 3 = 0.000367 ≥ 0.0003 → short.
    // Event 5 (bar 40): (0.0005 + 0.00005 + 0.00005) / 3 = 0.0002 ≥ 0.0001: hold. Event 6 (bar 48): 0.00005 < 0.0001 → flat.
    // Event 7 (bar 56): −0.000167, not ≤ −0.0003. Event 8 (bar 64): (0.00005 − 0.0006 − 0.0006) / 3 = −0.000383 → long.
    assert.deepEqual([...signals('funding_carry', {}, bars, events)], [
      [16, -1],
      [48, 0],
      [64, 1],
    ])
  })

  it('without allow_long it stays flat through negative funding', () => {
    assert.deepEqual([...signals('funding_carry', { allow_long: false }, bars, events)], [
      [16, -1],
      [48, 0],
    ])
  })
})

describe('cross_sectional_momentum', () => {
  const template = findTemplate('cross_sectional_momentum') as MultiSymbolTemplate
  // Three symbols: A rises, B is flat, C falls; after bar 12 A and C swap trends.
  const series = [
    closes([100, 112, 13], [112, 90, 12]),
    closes([100, 100, 25]),
    closes([100, 88, 13], [88, 110, 12]),
  ].map((c, s) => barsFromCloses(['AAAUSDT', 'BBBUSDT', 'CCCUSDT'][s]!, START, HOUR, c))

  it('ranks by trailing return and rebalances every N bars: best long, worst short, equal weights', () => {
    const params = validParams('cross_sectional_momentum', { lookback: 4, rebalance_every: 6, long_count: 1, short_count: 1 })
    const signal = template.create({ bars: series, funding: series.map(() => NO_FUNDING), rules: series.map(() => BTCUSDT_RULES) }, params as never)
    const at = new Int32Array(3)
    const targets = new Float64Array(3)
    const decisions: [number, number[]][] = []
    for (let i = 0; i < 25; i++) {
      at.fill(i)
      targets.fill(Number.NaN)
      if (signal.onStep(at, targets)) decisions.push([i, [...targets]])
    }
    // First rebalance once 4 bars of history exist (bar 4), then every 6 bars: 10, 16, 22.
    assert.deepEqual(
      decisions.map(([i]) => i),
      [4, 10, 16, 22],
    )
    assert.deepEqual(decisions[0]![1], [0.5, 0, -0.5])
    assert.deepEqual(decisions[1]![1], [0.5, 0, -0.5])
    assert.deepEqual(decisions[2]![1], [-0.5, 0, 0.5], 'after the swap C leads and A lags')
  })
})

describe('every template', () => {
  it('decides only from bars up to the current one (same signals on a truncated series)', () => {
    for (const template of TEMPLATES) {
      for (const seed of [1, 2, 3]) {
        const full = Array.from({ length: template.multiSymbol ? 3 : 1 }, (_, s) => randomBars(`S${s}USDT`, seed * 7 + s, 400, START, HOUR, 1000 + 500 * s))
        const next = random(seed)
        const events = funding(Array.from({ length: 50 }, (_, k) => ({ time: START + k * 8 * HOUR + 1, rate: (next() - 0.4) * 0.002 })))
        const cut = 250
        const truncated = full.map((b) => ({
          ...b,
          openTime: b.openTime.slice(0, cut),
          open: b.open.slice(0, cut),
          high: b.high.slice(0, cut),
          low: b.low.slice(0, cut),
          close: b.close.slice(0, cut),
          volume: b.volume.slice(0, cut),
        }))
        const run = (bars: BarSeries[]) => {
          const params = validParams(template.id, template.multiSymbol ? { lookback: 10, rebalance_every: 7 } : {})
          const context = { bars, funding: bars.map(() => events), rules: bars.map(() => BTCUSDT_RULES) }
          const out: string[] = []
          if (template.multiSymbol) {
            const signal = template.create(context, params as never)
            const at = new Int32Array(bars.length)
            const targets = new Float64Array(bars.length)
            for (let i = 0; i < bars[0]!.openTime.length; i++) {
              at.fill(i)
              targets.fill(Number.NaN)
              if (signal.onStep(at, targets)) out.push(`${i}:${[...targets].join(',')}`)
            }
          } else {
            const signal = template.create(context, params as never)
            for (let i = 0; i < bars[0]!.openTime.length; i++) {
              const t = signal.onBar(i)
              if (!Number.isNaN(t)) out.push(`${i}:${t}`)
            }
          }
          return out
        }
        const whole = run(full).filter((entry) => Number(entry.split(':')[0]) < cut)
        assert.deepEqual(run(truncated), whole, `${template.id} seed ${seed}`)
      }
    }
  })

  it('states targets within [−1, 1] only', () => {
    for (const template of TEMPLATES.filter((t) => !t.multiSymbol)) {
      const bars = randomBars('BTCUSDT', 42, 2000, START, HOUR)
      const next = random(42)
      const events = funding(Array.from({ length: 250 }, (_, k) => ({ time: START + k * 8 * HOUR + 1, rate: (next() - 0.45) * 0.002 })))
      for (const target of signals(template.id, {}, bars, events).values()) {
        assert.ok(target >= -1 && target <= 1, `${template.id}: ${target}`)
      }
    }
  })

  it('states no target before its warm-up (warmupBars), the boundary backtests and runners share', () => {
    for (const template of TEMPLATES) {
      for (const seed of [1, 2, 3, 4, 5, 6]) {
        const count = template.multiSymbol ? 3 : 1
        const bars = Array.from({ length: count }, (_, s) => randomBars(`S${s}USDT`, seed * 11 + s, 300, START, HOUR, 1000 + 500 * s))
        const next = random(seed)
        // Large rates from the first bar on, so funding_carry decides as early as its events allow.
        const events = funding(Array.from({ length: 40 }, (_, k) => ({ time: START + k * 8 * HOUR + 1, rate: (next() - 0.5) * 0.004 })))
        const params = validParams(template.id, template.multiSymbol ? { lookback: 5, rebalance_every: 1 } : {})
        const warmup = template.warmupBars(params as never, HOUR)
        const context = { bars, funding: bars.map(() => events), rules: bars.map(() => BTCUSDT_RULES) }
        let first = Infinity
        if (template.multiSymbol) {
          const signal = template.create(context, params as never)
          const at = new Int32Array(count)
          const targets = new Float64Array(count)
          for (let i = 0; i < 300 && first === Infinity; i++) {
            at.fill(i)
            targets.fill(Number.NaN)
            if (signal.onStep(at, targets)) first = i
          }
        } else {
          const signal = template.create(context, params as never)
          for (let i = 0; i < 300 && first === Infinity; i++) if (!Number.isNaN(signal.onBar(i))) first = i
        }
        assert.ok(first >= warmup, `${template.id} seed ${seed}: first target at bar ${first}, warm-up ${warmup}`)
      }
    }
  })
})
