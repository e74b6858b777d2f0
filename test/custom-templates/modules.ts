/** Strategy modules for the templates API's tests (the module contract of issue 22). */

// sma_cross's parameters, a cross-field rule, a warm-up of `slow` bars.
export const SMA = `export const params = {
  fast: { type: 'integer', default: 10, minimum: 2, maximum: 500, description: 'fast SMA length' },
  slow: { type: 'integer', default: 30, minimum: 3, maximum: 1000 },
  allow_short: { type: 'boolean', default: false },
}
export function validate(p) {
  if (p.fast >= p.slow) return { field: 'fast', message: 'fast must be below slow' }
}
export function warmup(p) { return p.slow }
export function create(p, ctx) {
  return { onBar(bar) { return NaN } }
}
`
export const SMA_TS = `interface Params { fast: number; slow: number }
export const params = {
  fast: { type: 'integer' as const, default: 5, minimum: 2, maximum: 50 },
  slow: { type: 'integer' as const, default: 20, minimum: 3, maximum: 200 },
}
export function warmup(p: Params): number { return p.slow }
export function create(p: Params, ctx: unknown) {
  return { onBar(bar: { close: number }): number { return NaN } }
}
`
export const MOMENTUM = `export const multi_symbol = true
export const params = { lookback: { type: 'integer', default: 20, minimum: 1, maximum: 1000 } }
export function warmup(p) { return p.lookback }
export function create(p, ctx) { return { onStep(bars) { return {} } } }
`
/** An object literal left open: a syntax error. */
export const BROKEN = 'export const params = {\n  fast: { type: "integer", default: 10 ,\n}\n'

