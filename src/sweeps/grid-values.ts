/** A grid value: a number, or a switch's true/false. */
export type ParamValue = number | boolean

/**
 * A range written `from..to:step` expands to at most this many values: the sweep's own limit
 * (MAX_CONFIGURATIONS in schemas.ts, not imported: the dashboard's bundle would take TypeBox with it).
 */
const MAX_VALUES = 10_000

/**
 * A grid parameter's values as typed, in the forms of the CLI's `--grid` and the dashboard's sweep
 * form: a list `20,30,50,100` (`true,false` for a switch) or an inclusive range `5..50:5` (step 1 when
 * left out). Throws an Error naming what is wrong; the API judges whether the values suit the template.
 * Pure (no DOM, no Node): the dashboard bundles it.
 */
export function parseGridValues(text: string): ParamValue[] {
  const trimmed = text.trim()
  if (trimmed === '') throw new Error('give values, e.g. 5..50:5 or 10,20,30')
  const range = /^(-?\d+(?:\.\d+)?)\s*\.\.\s*(-?\d+(?:\.\d+)?)(?:\s*:\s*(\d+(?:\.\d+)?))?$/.exec(trimmed)
  if (range) {
    const [from, to, step] = [Number(range[1]), Number(range[2]), range[3] === undefined ? 1 : Number(range[3])]
    if (![from, to, step].every(Number.isFinite)) throw new Error(`"${trimmed}" is not a range from..to:step`)
    if (!(step > 0)) throw new Error(`the step of "${trimmed}" must be above 0`)
    if (to < from) throw new Error(`"${trimmed}" runs backwards: write the smaller end first`)
    const count = Math.floor((to - from) / step + 1e-9) + 1
    if (count > MAX_VALUES) throw new Error(`"${trimmed}" makes ${count} values; a sweep runs at most ${MAX_VALUES} configurations`)
    // Each value from its index, not by adding the step again and again: 0.1 steps stay 0.3, not 0.30000000000000004.
    const decimals = Math.max(decimalsOf(range[1]!), decimalsOf(range[3] ?? '1'))
    return Array.from({ length: count }, (_, i) => Number((from + i * step).toFixed(decimals)))
  }
  return trimmed.split(/\s*,\s*/).map((item) => {
    if (item === 'true' || item === 'false') return item === 'true'
    const value = Number(item)
    if (item === '' || !Number.isFinite(value)) throw new Error(`"${item}" is not a number`)
    return value
  })
}

function decimalsOf(text: string): number {
  const [, fraction = ''] = text.split('.')
  return fraction.length
}
