// SMA crossover as a user module: the built-in sma_cross, ported. Prices are counted in ticks of the
// symbol's tick_size, so the running sums are integers and fast - slow is exact (no float drift inventing
// crosses in a flat market); the backtest of this module equals the built-in's trade for trade.
export const params = {
  fast: { type: 'integer', default: 10, minimum: 2, maximum: 999, description: 'Closes in the fast simple moving average' },
  slow: { type: 'integer', default: 30, minimum: 3, maximum: 1000, description: 'Closes in the slow simple moving average; greater than fast' },
  allow_short: { type: 'boolean', default: false, description: 'Reverse into a short on a cross down instead of closing' },
}

export function validate(p) {
  if (p.fast >= p.slow) return { field: 'params.fast', message: 'params.fast must be less than params.slow' }
}

export function warmup(p) {
  return p.slow
}

export function create(p, ctx) {
  const tick = ctx.rules[ctx.symbols[0]].tick_size
  const ring = new Float64Array(p.slow)
  const down = p.allow_short ? -1 : 0
  let count = 0
  let fastSum = 0
  let slowSum = 0
  let lastSign = 0
  return {
    onBar(bar) {
      const x = Math.round(bar.close / tick)
      const pos = count % p.slow
      if (count >= p.slow) slowSum -= ring[pos]
      if (count >= p.fast) fastSum -= ring[(count - p.fast) % p.slow]
      ring[pos] = x
      slowSum += x
      fastSum += x
      count++
      if (count < p.slow) return NaN
      const d = fastSum * p.slow - slowSum * p.fast
      let target = NaN
      if (d > 0) {
        if (lastSign < 0) target = 1
        lastSign = 1
      } else if (d < 0) {
        if (lastSign > 0) target = down
        lastSign = -1
      }
      return target
    },
  }
}
