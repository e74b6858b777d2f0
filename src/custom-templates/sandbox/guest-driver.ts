/**
 * The guest side of the sandbox: a script evaluated in a fresh QuickJS context before the user's module.
 * It takes what it needs of the intrinsics first (the module may replace any global afterwards), seeds
 * Math.random, removes shared memory, and returns the driver factory as its completion value, so the
 * driver is never reachable from the module: the host holds the only handle.
 *
 * The driver feeds a batch of closed bars one at a time to the module's onBar, so a batch never
 * reaches the module and look-ahead stays impossible. Bars arrive as a Float64Array of 8 columns per
 * bar (open_time, open, high, low, close, volume, quote_volume, trades); funding events as (time, rate, mark_price) triples,
 * each delivered to onFunding before the first bar whose close is after it (time < open_time + interval).
 * Each bar is a fresh object: a module may keep it. Measured: reusing one object would be ~2× faster
 * per bar, at the price of kept bars changing under the module (docs/decisions/custom-strategies.md, "Look-ahead stays impossible with batches").
 */
export const GUEST_DRIVER = String.raw`(function (seed) {
  'use strict'
  const F64 = Float64Array, parse = JSON.parse, stringify = JSON.stringify, keys = Object.keys
  const own = Object.hasOwn, imul = Math.imul, TypeErr = TypeError, Str = String
  let state = seed >>> 0
  // mulberry32: a seeded Math.random, so a job run twice gives the same numbers.
  Math.random = function random() {
    state = (state + 0x6d2b79f5) | 0
    let t = imul(state ^ (state >>> 15), 1 | state)
    t = (t + imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  delete globalThis.SharedArrayBuffer
  delete globalThis.Atomics
  delete globalThis.WebAssembly

  function outputError(what, value, time) {
    const shown = typeof value === 'number' ? Str(value) : typeof value
    const error = new TypeErr(what + ' returned ' + shown + ' for the bar at ' + time + '; a target is a number in [-1, 1], or NaN to keep the current one')
    error.name = 'StrategyOutputError'
    return error
  }
  function target(value, what, time) {
    // NaN fails both comparisons and passes: it keeps the current target.
    if (typeof value !== 'number' || value > 1 || value < -1) throw outputError(what, value, time)
    return value
  }

  return function driver(mod) {
    let strategy = null, symbols = [], index = { __proto__: null }, interval = 0, current = NaN
    function funding(symbol, f, k) {
      if (typeof strategy.onFunding === 'function') strategy.onFunding({ symbol: symbol, time: f[k], rate: f[k + 1], mark_price: f[k + 2] })
    }
    function bar(symbol, a, o) {
      return { symbol: symbol, open_time: a[o], open: a[o + 1], high: a[o + 2], low: a[o + 3], close: a[o + 4], volume: a[o + 5], quote_volume: a[o + 6], trades: a[o + 7] }
    }
    return {
      info() {
        return stringify({
          params: mod.params,
          multi: mod.multi_symbol === true,
          validate: typeof mod.validate === 'function',
          warmup: typeof mod.warmup === 'function',
          create: typeof mod.create === 'function',
        })
      },
      validate(params) {
        const problem = mod.validate(parse(params))
        if (problem === undefined || problem === null) return ''
        return stringify({ field: Str(problem.field), message: Str(problem.message) })
      },
      warmup(params) {
        if (typeof mod.warmup !== 'function') return 0
        const bars = mod.warmup(parse(params))
        if (typeof bars !== 'number') throw new TypeErr('warmup returned ' + typeof bars + '; it returns a whole number of bars')
        return bars
      },
      create(params, context) {
        const ctx = parse(context)
        symbols = ctx.symbols
        interval = ctx.interval_ms
        for (let s = 0; s < symbols.length; s++) index[symbols[s]] = s
        const made = mod.create(parse(params), ctx)
        if (typeof made !== 'object' || made === null) throw new TypeErr('create returned ' + (made === null ? 'null' : typeof made) + '; it returns an object with ' + (mod.multi_symbol === true ? 'onStep' : 'onBar'))
        const needed = mod.multi_symbol === true ? 'onStep' : 'onBar'
        if (typeof made[needed] !== 'function') throw new TypeErr('the object create returned has no ' + needed + ' method')
        strategy = made
      },
      bars(buffer, count, fundingBuffer, fundingCount) {
        // The hot loop: locals only, the bar built inline, the funding test once per due event (QuickJS
        // pays for every call, global read and closure access; bench/custom.ts's breakdown measured it).
        const a = new F64(buffer), f = new F64(fundingBuffer), out = new F64(count), symbol = symbols[0], s = strategy, nan = NaN, span = interval
        let k = 0, due = fundingCount > 0 ? f[0] - span : Infinity, i = 0, o = 0
        try {
          for (; i < count; i++, o += 8) {
            const time = a[o]
            while (time > due) {
              funding(symbol, f, 3 * k++)
              due = k < fundingCount ? f[3 * k] - span : Infinity
            }
            const t = s.onBar({ symbol: symbol, open_time: time, open: a[o + 1], high: a[o + 2], low: a[o + 3], close: a[o + 4], volume: a[o + 5], quote_volume: a[o + 6], trades: a[o + 7] })
            // NaN fails both comparisons and passes: it keeps the current target.
            if (typeof t !== 'number' || t > 1 || t < -1) throw outputError('onBar', t, time)
            out[i] = t
          }
        } finally {
          current = count > 0 ? a[8 * (i < count ? i : count - 1)] : current
        }
        return out.buffer
      },
      step(buffer, count, fundingBuffer, fundingCount) {
        // buffer: per bar (symbol index, then the 8 columns); funding: (symbol index, time, rate, mark_price).
        const a = new F64(buffer), f = new F64(fundingBuffer), bars = {}
        current = count > 0 ? a[1] : NaN
        for (let k = 0; k < fundingCount; k++) funding(symbols[f[k * 4]], f, k * 4 + 1)
        for (let i = 0; i < count; i++) bars[symbols[a[i * 9]]] = bar(symbols[a[i * 9]], a, i * 9 + 1)
        const answer = strategy.onStep(bars)
        const out = new F64(symbols.length)
        for (let s = 0; s < out.length; s++) out[s] = NaN
        if (answer === undefined || answer === null) return out.buffer
        if (typeof answer !== 'object') throw outputError('onStep', answer, current)
        const names = keys(answer)
        for (let n = 0; n < names.length; n++) {
          const name = names[n]
          if (!own(index, name)) throw new TypeErr('onStep returned a target for ' + Str(name) + ', which is not one of the run\'s symbols (' + symbols.join(', ') + ')')
          out[index[name]] = target(answer[name], 'onStep for ' + name, current)
        }
        return out.buffer
      },
      at() {
        return current
      },
    }
  }
})`
