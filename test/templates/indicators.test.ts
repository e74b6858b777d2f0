import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Bollinger } from '../../src/templates/indicators/bollinger.js'
import { CrossDetector } from '../../src/templates/indicators/cross.js'
import { Ema } from '../../src/templates/indicators/ema.js'
import { Macd } from '../../src/templates/indicators/macd.js'
import { RollingExtreme } from '../../src/templates/indicators/rolling-extreme.js'
import { WilderRsi } from '../../src/templates/indicators/rsi.js'
import { SmaPair } from '../../src/templates/indicators/sma-pair.js'
import { random } from '../engine/helpers.js'

const near = (a: number, b: number, what: string, tolerance = 1e-9) => assert.ok(Math.abs(a - b) <= tolerance, `${what}: ${a} ≠ ${b}`)

/** Exact sign of mean(last f) − mean(last s) from decimal strings, in BigInt units of 1e−8. */
function exactSign(prices: string[], i: number, f: number, s: number): number {
  const unit = (text: string) => {
    const [whole, fraction = ''] = text.split('.')
    return BigInt(whole!) * 100_000_000n + BigInt((fraction + '00000000').slice(0, 8))
  }
  let fast = 0n
  let slow = 0n
  for (let k = i - s + 1; k <= i; k++) {
    slow += unit(prices[k]!)
    if (k > i - f) fast += unit(prices[k]!)
  }
  const d = fast * BigInt(s) - slow * BigInt(f)
  return d > 0n ? 1 : d < 0n ? -1 : 0
}

describe('SmaPair', () => {
  it('has the exact sign of fast − slow, zeros included, where float running sums drift', () => {
    const next = random(11)
    // Prices that revisit a few decimal levels, so equal averages (exact zeros) happen often.
    const levels = ['100.1', '100.2', '100.3', '100.4', '100.5']
    const prices = Array.from({ length: 5000 }, () => levels[Math.floor(next() * levels.length)]!)
    const pair = new SmaPair(2, 4)
    let zeros = 0
    let floatMistakes = 0
    let fastFloat = 0
    let slowFloat = 0
    for (let i = 0; i < prices.length; i++) {
      const x = Number(prices[i])
      pair.push(x)
      fastFloat += x - (i >= 2 ? Number(prices[i - 2]) : 0)
      slowFloat += x - (i >= 4 ? Number(prices[i - 4]) : 0)
      if (i < 3) {
        assert.equal(pair.ready, false)
        continue
      }
      const expected = exactSign(prices, i, 2, 4)
      assert.equal(pair.diffSign(), expected, `bar ${i}`)
      if (expected === 0) zeros++
      if (Math.sign(fastFloat / 2 - slowFloat / 4) !== expected) floatMistakes++
    }
    assert.ok(zeros > 100, `${zeros} exact zeros`)
    assert.ok(floatMistakes > 0, 'float running sums get some of those signs wrong (this is why SmaPair counts ticks)')
  })

  it('raises its precision when a price needs more decimals, and stays exact', () => {
    const prices = ['100', '101', '102.5', '99.25', '100.125', '100.125', '101.0625', '99.9375', '100.00000001', '100.5']
    const pair = new SmaPair(2, 3)
    prices.forEach((text, i) => {
      pair.push(Number(text))
      if (i >= 2) assert.equal(pair.diffSign(), exactSign(prices, i, 2, 3), `bar ${i}`)
    })
    near(pair.fastMean, (100.00000001 + 100.5) / 2, 'fast mean', 1e-9)
  })

  it('falls back to float sums beyond 2^53 and keeps sensible averages', () => {
    const pair = new SmaPair(999, 1000)
    for (let i = 0; i < 1200; i++) pair.push(123_456_789.123456 + (i % 7))
    assert.ok(pair.ready)
    near(pair.slowMean, 123_456_789.123456 + 3, 'slow mean', 0.02)
  })
})

/** Calls pushAll over random runs of prices; returns the signs and the pair. */
function pushInRuns(prices: Float64Array, fast: number, slow: number, seed: number) {
  const next = random(seed)
  const pair = new SmaPair(fast, slow)
  const signs = new Float64Array(prices.length)
  for (let from = 0; from < prices.length; ) {
    const to = Math.min(prices.length, from + 1 + Math.floor(next() * 300))
    const out = new Float64Array(to - from)
    pair.pushAll(prices, from, to, out)
    signs.set(out, from)
    from = to
  }
  return { pair, signs }
}

describe('SmaPair.pushAll', () => {
  // Tick-grid prices, then a price with more decimals after the warm-up (a rescale inside a run), a price
  // on the grid but too large for exact sums (the float fallback), and corrupt values (NaN, 0, negative) that the engine would stop at.
  const next = random(5)
  const cases: [string, number, number, Float64Array][] = [
    ['one decimal', 10, 30, Float64Array.from({ length: 5000 }, () => Math.round((95_000 + next() * 500) * 10) / 10)],
    ['more decimals later', 3, 7, Float64Array.from({ length: 3000 }, (_, i) => (i < 1000 ? 100 + (i % 9) : i < 2000 ? 100 + (i % 9) / 4 : 100 + (i % 13) / 1024))],
    ['float fallback', 5, 20, Float64Array.from({ length: 2000 }, (_, i) => (i === 700 ? 9_876_543_210_123.4 : 100 + (i % 11) / 10))],
    ['corrupt values', 2, 4, Float64Array.from({ length: 500 }, (_, i) => (i === 100 ? Number.NaN : i === 200 ? 0 : i === 300 ? -5.5 : 50 + (i % 5) / 10))],
  ]
  for (const [name, fast, slow, prices] of cases) {
    it(`gives push()'s signs and state, run by run (${name})`, () => {
      const reference = new SmaPair(fast, slow)
      const expected = Array.from(prices, (price) => {
        reference.push(price)
        return reference.ready ? reference.diffSign() : Number.NaN
      })
      for (const seed of [1, 2, 3]) {
        const { pair, signs } = pushInRuns(prices, fast, slow, seed)
        assert.deepEqual([...signs], expected, `seed ${seed}`)
        assert.equal(pair.fastMean, reference.fastMean)
        assert.equal(pair.slowMean, reference.slowMean)
      }
    })
  }
})

describe('CrossDetector', () => {
  it('crosses on the first nonzero value whose previous nonzero value had the other sign', () => {
    const detector = new CrossDetector()
    assert.deepEqual([1, 0, 1, 0, -1, 0, 0, -1, 1, -1, 0, 1].map((s) => detector.update(s)), [0, 0, 0, 0, -1, 0, 0, 0, 1, -1, 0, 1])
  })

  it('updateAll maps update() over a run in place: 1 → up, −1 → down, 0 and NaN (not ready) → NaN', () => {
    const next = random(9)
    const values = Float64Array.from({ length: 2000 }, () => [1, -1, 0, Number.NaN][Math.floor(next() * 4)]!)
    const one = new CrossDetector()
    const expected = Array.from(values, (v) => {
      if (v !== v) return Number.NaN
      const crossed = one.update(v)
      return crossed > 0 ? 0.5 : crossed < 0 ? -0.25 : Number.NaN
    })
    const all = new CrossDetector()
    const got = Float64Array.from(values)
    all.updateAll(got.subarray(0, 777), 777, 0.5, -0.25)
    all.updateAll(got.subarray(777), got.length - 777, 0.5, -0.25)
    assert.deepEqual([...got], expected)
    assert.ok(expected.filter((x) => x === 0.5).length > 100)
  })
})

describe('Ema', () => {
  it('is seeded with the simple average, then smooths with α = 2 / (n + 1)', () => {
    const ema = new Ema(3)
    assert.deepEqual([1, 2, 3, 4, 5].map((x) => ema.push(x)), [Number.NaN, Number.NaN, 2, 3, 4])
  })
})

describe('WilderRsi', () => {
  it('matches a hand computation (period 3)', () => {
    // Changes +1, +1, −1: first averages gain 2/3, loss 1/3 → RS 2 → 66.67.
    // +2: gain (2/3 × 2 + 2) / 3 = 10/9, loss (1/3 × 2) / 3 = 2/9 → RS 5 → 83.33. 0: both × 2/3 → still 83.33.
    const rsi = new WilderRsi(3)
    const values = [10, 11, 12, 11, 13, 13].map((x) => rsi.push(x))
    assert.deepEqual(values.slice(0, 3), [Number.NaN, Number.NaN, Number.NaN])
    near(values[3]!, 100 - 100 / 3, 'first')
    near(values[4]!, 100 - 100 / 6, 'second')
    near(values[5]!, 100 - 100 / 6, 'third')
  })

  it('is 100 without losses and 50 without any movement', () => {
    const up = new WilderRsi(2)
    assert.equal([1, 2, 3, 4].map((x) => up.push(x)).at(-1), 100)
    const flat = new WilderRsi(2)
    assert.equal([5, 5, 5, 5].map((x) => flat.push(x)).at(-1), 50)
  })
})

describe('Bollinger', () => {
  it('uses the population standard deviation', () => {
    const bands = new Bollinger(4, 2)
    assert.deepEqual([1, 2, 3].map((x) => bands.push(x)), [false, false, false])
    assert.equal(bands.push(4), true)
    // mean 2.5, population variance (2.25 + 0.25 + 0.25 + 2.25) / 4 = 1.25.
    near(bands.middle, 2.5, 'middle')
    near(bands.upper, 2.5 + 2 * Math.sqrt(1.25), 'upper')
    near(bands.lower, 2.5 - 2 * Math.sqrt(1.25), 'lower')
  })

  it('stays accurate at BTC price levels', () => {
    const bands = new Bollinger(20, 2)
    const prices = Array.from({ length: 20 }, (_, k) => 65_000 + (k % 2 === 0 ? 0.1 : -0.1))
    for (const p of prices) bands.push(p)
    near(bands.upper - bands.middle, 0.2, 'two standard deviations of ±0.1', 1e-9)
  })
})

describe('RollingExtreme', () => {
  it('agrees with a scan of the window on random data', () => {
    const next = random(5)
    const values = Array.from({ length: 2000 }, () => Math.round(next() * 100))
    for (const period of [1, 2, 7, 50]) {
      const max = new RollingExtreme(period, 'max')
      const min = new RollingExtreme(period, 'min')
      values.forEach((x, i) => {
        max.push(x)
        min.push(x)
        if (i < period - 1) {
          assert.ok(Number.isNaN(max.value))
          return
        }
        const window = values.slice(i - period + 1, i + 1)
        assert.equal(max.value, Math.max(...window), `max period ${period} at ${i}`)
        assert.equal(min.value, Math.min(...window), `min period ${period} at ${i}`)
      })
    }
  })
})

describe('Macd', () => {
  it('is EMA(fast) − EMA(slow) with an EMA(signal) of it, each seeded by its simple average', () => {
    const next = random(9)
    const closes = Array.from({ length: 200 }, (_, k) => 100 + 10 * Math.sin(k / 9) + next())
    const naiveEma = (xs: number[], n: number) => {
      const out: number[] = xs.map(() => Number.NaN)
      const first = xs.findIndex((x) => !Number.isNaN(x))
      if (first < 0 || xs.length < first + n) return out
      out[first + n - 1] = xs.slice(first, first + n).reduce((a, b) => a + b, 0) / n
      for (let k = first + n; k < xs.length; k++) out[k] = out[k - 1]! + (2 / (n + 1)) * (xs[k]! - out[k - 1]!)
      return out
    }
    const fast = naiveEma(closes, 12)
    const slow = naiveEma(closes, 26)
    const line = closes.map((_, k) => (Number.isNaN(slow[k]!) ? Number.NaN : fast[k]! - slow[k]!))
    const signal = naiveEma(line, 9)
    const macd = new Macd(12, 26, 9)
    closes.forEach((c, k) => {
      const histogram = macd.push(c)
      if (k < 25 + 8) assert.ok(Number.isNaN(histogram), `bar ${k} not defined yet`)
      else near(histogram, line[k]! - signal[k]!, `histogram ${k}`, 1e-9)
    })
  })
})
