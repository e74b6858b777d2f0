// Momentum rotation across the run's symbols, as a user module: every `rebalance` steps, rank the symbols
// by their return over the last `lookback` closes and hold the best `top` of them long, 1/top of equity
// each; a symbol whose return is not above `min_return` is not held (that slot stays in cash).
// Long-only. Targets are stated only when they change, so a held symbol is not resized at each rebalance.
export const multi_symbol = true

export const params = {
  lookback: { type: 'integer', default: 72, minimum: 2, maximum: 2000, description: 'Closes over which each symbol’s return is measured' },
  top: { type: 'integer', default: 1, minimum: 1, maximum: 20, description: 'How many of the best symbols to hold, each with 1/top of equity' },
  rebalance: { type: 'integer', default: 24, minimum: 1, maximum: 1000, description: 'Steps between two rankings' },
  min_return: { type: 'number', default: 0, minimum: -1, maximum: 10, description: 'Hold a symbol only when its return over lookback is above this (0.02 = 2 %)' },
}

export function validate(p) {
  if (p.rebalance > p.lookback) return { field: 'params.rebalance', message: 'params.rebalance must not exceed params.lookback' }
}

export function warmup(p) {
  return p.lookback
}

export function create(p, ctx) {
  const size = p.lookback + 1
  // Per symbol: the last lookback + 1 closes in a ring, how many it has seen, and the target last stated.
  const state = {}
  for (const symbol of ctx.symbols) state[symbol] = { closes: new Float64Array(size), seen: 0, held: 0 }
  let steps = 0

  function momentum(s) {
    if (s.seen < size) return NaN
    const newest = s.closes[(s.seen - 1) % size]
    const oldest = s.closes[s.seen % size]
    return newest / oldest - 1
  }

  return {
    onStep(bars) {
      for (const symbol in bars) {
        const s = state[symbol]
        s.closes[s.seen % size] = bars[symbol].close
        s.seen++
      }
      steps++
      if (steps % p.rebalance !== 0) return undefined

      const ranked = ctx.symbols
        .map((symbol) => ({ symbol, r: momentum(state[symbol]) }))
        .filter((x) => x.r === x.r && x.r > p.min_return)
        // Ties go to the symbol listed first in the run, so the ranking never depends on sort stability.
        .sort((a, b) => b.r - a.r || ctx.symbols.indexOf(a.symbol) - ctx.symbols.indexOf(b.symbol))
        .slice(0, p.top)
      const chosen = new Set(ranked.map((x) => x.symbol))

      const targets = {}
      for (const symbol of ctx.symbols) {
        const want = chosen.has(symbol) ? 1 / p.top : 0
        if (want !== state[symbol].held) {
          targets[symbol] = want
          state[symbol].held = want
        }
      }
      return targets
    },
  }
}
