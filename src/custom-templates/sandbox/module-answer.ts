import { StrategyError } from './strategy-error.js'

/**
 * What a module answered for one crossing (a batch of bars, or one step), as the host read and checked it:
 * a target per bar (or per symbol), and [stop, take profit] per bar (or symbol) when it stated any level.
 */
export interface ModuleAnswer {
  /** NaN keeps the current target; anything else is in [−1, 1]. */
  targets: Float64Array
  /** levels[2k] a stop price, levels[2k + 1] a take-profit price: NaN keep, 0 remove, > 0 set; undefined when none was stated. */
  levels: Float64Array | undefined
}

/**
 * The guest's answer bytes (guest-driver.ts: n targets, then 2n levels only when the module stated one)
 * checked on the host, after the crossing: the guest validates each value inside the module's realm,
 * where a module can reach the intrinsics the driver runs on (issue 37 forged checked targets through
 * %TypedArray%.prototype.buffer), so nothing read from it is trusted. A wrong byte length, a target that
 * is not NaN or in [−1, 1], or a level that is not NaN, 0 or a finite price > 0 is STRATEGY_INVALID_OUTPUT
 * naming the value and the bar (`where(k)`: the bar or symbol of entry k).
 */
export function moduleAnswer(bytes: Uint8Array, n: number, where: (k: number) => string): ModuleAnswer {
  const length = bytes.byteLength
  if (length !== 8 * n && length !== 24 * n) {
    throw new StrategyError('STRATEGY_INVALID_OUTPUT', `the sandbox answered ${length} bytes for ${n} targets${n > 0 ? ` from ${where(0)}` : ''}: 8 bytes a target, or 24 with levels`)
  }
  // A copy, aligned for Float64Array whatever the offset in the guest's heap, that nothing else holds.
  const all = new Float64Array(bytes.slice().buffer)
  const targets = all.subarray(0, n)
  for (let k = 0; k < n; k++) {
    const t = targets[k]!
    if (t > 1 || t < -1) throw invalid(`a target of ${t}`, where(k), 'a target is NaN or a number in [-1, 1]')
  }
  if (length === 8 * n) return { targets, levels: undefined }
  const levels = all.subarray(n)
  for (let j = 0; j < 2 * n; j++) {
    const level = levels[j]!
    if (!(level !== level || level === 0 || (level > 0 && level < Infinity))) {
      throw invalid(`a ${j % 2 === 0 ? 'stop_price' : 'take_profit_price'} of ${level}`, where(j >> 1), 'a level is NaN (keep), 0 (remove) or a finite price > 0')
    }
  }
  return { targets, levels }
}

function invalid(what: string, where: string, rule: string): StrategyError {
  return new StrategyError('STRATEGY_INVALID_OUTPUT', `the sandbox answered ${what} for ${where}: ${rule}`)
}
