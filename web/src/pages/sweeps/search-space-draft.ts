import type { RandomSpace } from '../../api/sweep-types.js'
import type { TemplateInfo } from '../../api/types.js'
import { type ParamValue, parseGridValues } from '../../../../src/sweeps/grid-values.js'

export interface PropertySchema {
  type?: string
  minimum?: number
  maximum?: number
}

/** What the user typed for each swept parameter; unswept ones take the base params' value. */
export interface SearchSpaceDraft {
  mode: 'grid' | 'random'
  swept: string[]
  /** Swept switches: they take a grid's values only (a random space draws numbers). */
  switches: string[]
  /** Grid values as typed, by param (`5..50:5`, `10,20`). */
  values: Record<string, string>
  /** Random ranges as typed, by param. */
  ranges: Record<string, { min: string; max: string; step: string }>
  samples: string
  seed: string
}

export const emptySearchSpace = (): SearchSpaceDraft => ({ mode: 'grid', swept: [], switches: [], values: {}, ranges: {}, samples: '100', seed: '1' })

/** The template's parameters a sweep can vary: numbers, integers and switches (never enums or text). */
export function sweepableParams(template: TemplateInfo): { name: string; schema: PropertySchema }[] {
  const properties = ((template.params_schema as { properties?: Record<string, PropertySchema> }).properties ?? {}) as Record<string, PropertySchema>
  return Object.entries(properties)
    .filter(([, schema]) => schema.type === 'integer' || schema.type === 'number' || schema.type === 'boolean')
    .map(([name, schema]) => ({ name, schema }))
}

/** The request's `grid` or `random`, or an Error naming the parameter whose input is wrong. */
export function searchSpaceBody(draft: SearchSpaceDraft): { grid: Record<string, ParamValue[]> } | { random: RandomSpace } {
  if (draft.swept.length === 0) throw new Error('pick at least one parameter to sweep')
  if (draft.mode === 'grid') {
    const grid: Record<string, ParamValue[]> = {}
    for (const name of draft.swept) {
      try {
        grid[name] = parseGridValues(draft.values[name] ?? '')
      } catch (error) {
        throw new Error(`${name}: ${(error as Error).message}`)
      }
    }
    return { grid }
  }
  const space: RandomSpace['space'] = {}
  for (const name of draft.swept) {
    if (draft.switches.includes(name)) throw new Error(`${name}: a switch is swept in a grid only; leave it out of a random search`)
    const typed = draft.ranges[name] ?? { min: '', max: '', step: '' }
    const min = Number(typed.min)
    const max = Number(typed.max)
    if (typed.min.trim() === '' || typed.max.trim() === '' || !Number.isFinite(min) || !Number.isFinite(max)) throw new Error(`${name}: give a minimum and a maximum`)
    space[name] = { min, max, ...(typed.step.trim() === '' ? {} : { step: Number(typed.step) }) }
  }
  return { random: { samples: Number(draft.samples), seed: Number(draft.seed), space } }
}

/**
 * Configurations the draft makes (before the template's rules skip any), or what is wrong with it in the
 * words the CLI's --grid uses (`fast: "50..5:5" runs backwards: write the smaller end first`: both read
 * through parseGridValues); `problem` undefined too while no parameter is picked.
 */
export function gridSize(draft: SearchSpaceDraft): { count: number } | { problem: string | undefined } {
  if (draft.swept.length === 0) return { problem: undefined }
  try {
    const body = searchSpaceBody(draft)
    return { count: 'grid' in body ? Object.values(body.grid).reduce((n, values) => n * values.length, 1) : body.random.samples }
  } catch (error) {
    return { problem: (error as Error).message }
  }
}
