import { invalidParameter } from '../http/errors.js'
import { MAX_CONFIGURATIONS, type SweepCreate } from './schemas.js'

/** A configuration's swept values: numbers, switches, or an exits fraction as written (swept-exits.ts). */
export type Combination = Record<string, number | boolean | string>
type Grid = NonNullable<SweepCreate['grid']>
type Random = NonNullable<SweepCreate['random']>

/** The field a swept param is named by in errors: grid.fast or random.space.fast. */
export function sweptField(input: Pick<SweepCreate, 'grid' | 'random'>, name: string): string {
  return input.grid ? `grid.${name}` : `random.space.${name}`
}

/**
 * The swept values of every configuration, in run order: the grid's cartesian product (the last param
 * varying fastest), or `samples` draws of the random search. 400 naming the count beyond 10,000,
 * counted before anything is built.
 */
export function combinationsOf(input: Pick<SweepCreate, 'grid' | 'random'>, isInteger: (name: string) => boolean): Combination[] {
  if ((input.grid === undefined) === (input.random === undefined)) {
    throw invalidParameter('grid', 'give exactly one of grid (a cartesian product) and random (a seeded random search)')
  }
  return input.grid ? gridCombinations(input.grid) : randomCombinations(input.random!, isInteger)
}

function gridCombinations(grid: Grid): Combination[] {
  const names = Object.keys(grid)
  const count = names.reduce((product, name) => product * grid[name]!.length, 1)
  if (count > MAX_CONFIGURATIONS) {
    const sizes = names.map((name) => grid[name]!.length).join(' × ')
    throw invalidParameter('grid', `the grid has ${count.toLocaleString('en-US')} configurations (${sizes}); a sweep runs at most ${MAX_CONFIGURATIONS.toLocaleString('en-US')}`)
  }
  for (const name of names) {
    const values = grid[name]!
    if (new Set(values).size !== values.length) throw invalidParameter(`grid.${name}`, `grid.${name} lists a value twice`)
  }
  const combinations: Combination[] = []
  const index = names.map(() => 0)
  for (let k = 0; k < count; k++) {
    combinations.push(Object.fromEntries(names.map((name, i) => [name, grid[name]![index[i]!]!])))
    for (let i = names.length - 1; i >= 0; i--) {
      if (++index[i]! < grid[names[i]!]!.length) break
      index[i] = 0
    }
  }
  return combinations
}

/** Draws with mulberry32 from `seed`; each param in the space's key order, so a seed always draws the same. */
function randomCombinations(random: Random, isInteger: (name: string) => boolean): Combination[] {
  const next = mulberry32(random.seed ?? 1)
  const draws = Object.entries(random.space).map(([name, range]) => {
    // An exits bound may be a decimal string, checked as one before (swept-exits.ts).
    const [min, max, step] = [Number(range.min), Number(range.max), range.step]
    const field = `random.space.${name}`
    if (!(min <= max)) throw invalidParameter(field, `${field}.min must not exceed its max`)
    if (step !== undefined) {
      const steps = Math.floor((max - min) / step + 1e-9)
      // Rounded to 12 significant digits so that 0.1-steps give 0.3, not 0.30000000000000004.
      return (): [string, number] => [name, Number((min + Math.floor(next() * (steps + 1)) * step).toPrecision(12))]
    }
    if (isInteger(name)) {
      const low = Math.ceil(min)
      const high = Math.floor(max)
      if (low > high) throw invalidParameter(field, `${field} holds no integer`)
      return (): [string, number] => [name, low + Math.floor(next() * (high - low + 1))]
    }
    return (): [string, number] => [name, min + next() * (max - min)]
  })
  return Array.from({ length: random.samples }, () => Object.fromEntries(draws.map((draw) => draw())))
}

/** A small seeded generator of uniform numbers in [0, 1) (T. Ettinger's mulberry32). */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }
}
