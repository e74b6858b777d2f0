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
 *
 * The answer is one ArrayBuffer the driver allocated itself (never read through a prototype getter such
 * as %TypedArray%.prototype.buffer, which the module can redefine): n targets (n bars, or one step's n
 * symbols), followed by 2n levels (stop, take profit: NaN keep, 0 remove, > 0 a price) only when the
 * module stated a level in this call. The host checks it again (module-answer.ts).
 */
export const GUEST_DRIVER = String.raw`(function (seed) {
  'use strict'
  const F64 = Float64Array, AB = ArrayBuffer, parse = JSON.parse, stringify = JSON.stringify, keys = Object.keys
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

  const TARGET_RULE = 'a target is a number in [-1, 1], or NaN to keep the current one'
  const ANSWER_RULE = 'it returns a target (a number in [-1, 1], or NaN to keep the current one) or { target, stop_price?, take_profit_price? }'
  const PRICE_RULE = 'a price is a finite number > 0, null to remove the level, or absent to keep it'
  function outputError(message) {
    const error = new TypeErr(message)
    error.name = 'StrategyOutputError'
    return error
  }
  function shown(value) {
    return typeof value === 'number' ? Str(value) : value === null ? 'null' : typeof value
  }
  // A returned value that is not a target number: an answer object's target, after its keys are checked.
  function objectTarget(answer, what, time) {
    if (typeof answer !== 'object' || answer === null) throw outputError(what + ' returned ' + shown(answer) + ' for the bar at ' + time + '; ' + (typeof answer === 'number' ? TARGET_RULE : ANSWER_RULE))
    const names = keys(answer)
    for (let n = 0; n < names.length; n++) {
      const name = names[n]
      if (name !== 'target' && name !== 'stop_price' && name !== 'take_profit_price') {
        throw outputError(what + ' returned an object with the unknown key ' + stringify(Str(name)) + ' for the bar at ' + time + '; its keys are target, stop_price and take_profit_price')
      }
    }
    if (!own(answer, 'target')) throw outputError(what + ' returned an object without target for the bar at ' + time + '; ' + ANSWER_RULE)
    const t = answer.target
    // NaN fails both comparisons and passes: it keeps the current target.
    if (typeof t !== 'number' || t > 1 || t < -1) throw outputError(what + ' returned target ' + shown(t) + ' for the bar at ' + time + '; ' + TARGET_RULE)
    return t
  }
  // An answer object's level: NaN when absent (or undefined), 0 for null (remove), else a finite price > 0.
  function price(answer, key, what, time) {
    if (!own(answer, key)) return NaN
    const p = answer[key]
    if (p === undefined) return NaN
    if (p === null) return 0
    if (typeof p !== 'number' || !(p > 0 && p < Infinity)) throw outputError(what + ' returned ' + key + ' ' + shown(p) + ' for the bar at ' + time + '; ' + PRICE_RULE)
    return p
  }
  // An answer with room for levels: the targets written so far (the first 'written' of n), every level NaN.
  function widened(narrow, n, written) {
    const answer = new AB(24 * n), wide = new F64(answer)
    for (let k = 0; k < written; k++) wide[k] = narrow[k]
    for (let k = n; k < 3 * n; k++) wide[k] = NaN
    return answer
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
        // A number answer costs what it always did; an answer object takes the branch.
        const a = new F64(buffer), f = new F64(fundingBuffer), symbol = symbols[0], s = strategy, span = interval
        let answer = new AB(8 * count), out = new F64(answer), wide = false, k = 0, due = fundingCount > 0 ? f[0] - span : Infinity, i = 0, o = 0
        try {
          for (; i < count; i++, o += 8) {
            const time = a[o]
            while (time > due) {
              funding(symbol, f, 3 * k++)
              due = k < fundingCount ? f[3 * k] - span : Infinity
            }
            let t = s.onBar({ symbol: symbol, open_time: time, open: a[o + 1], high: a[o + 2], low: a[o + 3], close: a[o + 4], volume: a[o + 5], quote_volume: a[o + 6], trades: a[o + 7] })
            // NaN fails both comparisons and passes: it keeps the current target.
            if (typeof t !== 'number' || t > 1 || t < -1) {
              const stated = t
              t = objectTarget(stated, 'onBar', time)
              const stop = price(stated, 'stop_price', 'onBar', time), take = price(stated, 'take_profit_price', 'onBar', time)
              if (stop === stop || take === take) {
                if (!wide) {
                  answer = widened(out, count, i)
                  out = new F64(answer)
                  wide = true
                }
                out[count + 2 * i] = stop
                out[count + 2 * i + 1] = take
              }
            }
            out[i] = t
          }
        } finally {
          current = count > 0 ? a[8 * (i < count ? i : count - 1)] : current
        }
        return answer
      },
      step(buffer, count, fundingBuffer, fundingCount) {
        // buffer: per bar (symbol index, then the 8 columns); funding: (symbol index, time, rate, mark_price).
        const a = new F64(buffer), f = new F64(fundingBuffer), bars = {}, n = symbols.length
        current = count > 0 ? a[1] : NaN
        for (let k = 0; k < fundingCount; k++) funding(symbols[f[k * 4]], f, k * 4 + 1)
        for (let i = 0; i < count; i++) bars[symbols[a[i * 9]]] = bar(symbols[a[i * 9]], a, i * 9 + 1)
        const answer = strategy.onStep(bars)
        let reply = new AB(8 * n), out = new F64(reply), wide = false
        for (let s = 0; s < n; s++) out[s] = NaN
        if (answer !== undefined && answer !== null) {
          if (typeof answer !== 'object') throw outputError('onStep returned ' + shown(answer) + ' for the bar at ' + current + '; it returns targets by symbol, e.g. { BTCUSDT: 0.5 }')
          const names = keys(answer)
          for (let m = 0; m < names.length; m++) {
            const name = names[m]
            if (!own(index, name)) throw new TypeErr('onStep returned a target for ' + Str(name) + ', which is not one of the run\'s symbols (' + symbols.join(', ') + ')')
            const what = 'onStep for ' + name, s = index[name], stated = answer[name]
            let t = stated
            if (typeof t !== 'number' || t > 1 || t < -1) {
              t = objectTarget(stated, what, current)
              const stop = price(stated, 'stop_price', what, current), take = price(stated, 'take_profit_price', what, current)
              if (stop === stop || take === take) {
                if (!wide) {
                  reply = widened(out, n, n)
                  out = new F64(reply)
                  wide = true
                }
                out[n + 2 * s] = stop
                out[n + 2 * s + 1] = take
              }
            }
            out[s] = t
          }
        }
        return reply
      },
      at() {
        return current
      },
    }
  }
})`
