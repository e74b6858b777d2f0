import type { ParamValue, RandomSpace } from '../../api/sweep-types.js'
import type { TemplateInfo } from '../../api/types.js'
import { parseGridValues } from './grid-values.js'

interface PropertySchema {
  type?: string
  minimum?: number
  maximum?: number
}

/** What the user typed for each swept parameter; unswept ones take the base params' value. */
export interface SearchSpaceDraft {
  mode: 'grid' | 'random'
  swept: string[]
  /** Grid values as typed, by param (`5..50:5`, `10,20`). */
  values: Record<string, string>
  /** Random ranges as typed, by param. */
  ranges: Record<string, { min: string; max: string; step: string }>
  samples: string
  seed: string
}

export const emptySearchSpace = (): SearchSpaceDraft => ({ mode: 'grid', swept: [], values: {}, ranges: {}, samples: '100', seed: '1' })

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
    const typed = draft.ranges[name] ?? { min: '', max: '', step: '' }
    const min = Number(typed.min)
    const max = Number(typed.max)
    if (typed.min.trim() === '' || typed.max.trim() === '' || !Number.isFinite(min) || !Number.isFinite(max)) throw new Error(`${name}: give a minimum and a maximum`)
    space[name] = { min, max, ...(typed.step.trim() === '' ? {} : { step: Number(typed.step) }) }
  }
  return { random: { samples: Number(draft.samples), seed: Number(draft.seed), space } }
}

/** Configurations a grid makes (before the template's rules skip any), or undefined while an input is unreadable. */
export function gridSize(draft: SearchSpaceDraft): number | undefined {
  try {
    const body = searchSpaceBody(draft)
    return 'grid' in body ? Object.values(body.grid).reduce((n, values) => n * values.length, 1) : body.random.samples
  } catch {
    return undefined
  }
}

/** Which parameters to sweep and over what: a grid of values each, or ranges to draw from. */
export function SearchSpace({ template, value, onChange }: { template: TemplateInfo; value: SearchSpaceDraft; onChange: (next: SearchSpaceDraft) => void }) {
  const params = sweepableParams(template)
  const set = (patch: Partial<SearchSpaceDraft>) => onChange({ ...value, ...patch })
  // A parameter switched on starts from its schema: a switch's two values, a number's bounds.
  const toggle = (name: string, schema: PropertySchema, on: boolean) =>
    set({
      swept: on ? [...value.swept, name] : value.swept.filter((n) => n !== name),
      ...(on && value.values[name] === undefined && schema.type === 'boolean' ? { values: { ...value.values, [name]: 'true,false' } } : {}),
      ...(on && value.ranges[name] === undefined
        ? { ranges: { ...value.ranges, [name]: { min: String(schema.minimum ?? ''), max: String(schema.maximum ?? ''), step: schema.type === 'integer' ? '1' : '' } } }
        : {}),
    })
  const size = gridSize(value)
  return (
    <fieldset class="search-space" data-testid="search-space">
      <legend>Swept parameters (the others keep the values above)</legend>
      <div class="radios" role="radiogroup" aria-label="search">
        <label class="check">
          <input type="radio" name="mode" value="grid" checked={value.mode === 'grid'} onChange={() => set({ mode: 'grid' })} />
          Grid (every combination)
        </label>
        <label class="check">
          <input type="radio" name="mode" value="random" checked={value.mode === 'random'} onChange={() => set({ mode: 'random' })} />
          Random (seeded samples)
        </label>
      </div>
      {params.map(({ name, schema }) => {
        const on = value.swept.includes(name)
        const range = value.ranges[name] ?? { min: '', max: '', step: '' }
        const setRange = (patch: Partial<typeof range>) => set({ ranges: { ...value.ranges, [name]: { ...range, ...patch } } })
        return (
          <div class="swept" key={name} data-swept={name}>
            <label class="check">
              <input type="checkbox" name={`sweep.${name}`} checked={on} onChange={(e) => toggle(name, schema, e.currentTarget.checked)} />
              {name}
            </label>
            {on && value.mode === 'grid' ? (
              <label>
                values
                <input
                  name={`grid.${name}`}
                  placeholder={schema.type === 'boolean' ? 'true,false' : '5..50:5 or 10,20,30'}
                  value={value.values[name] ?? ''}
                  onInput={(e) => set({ values: { ...value.values, [name]: e.currentTarget.value } })}
                />
              </label>
            ) : null}
            {on && value.mode === 'random' ? (
              <>
                <label>
                  min
                  <input name={`min.${name}`} inputMode="decimal" value={range.min} onInput={(e) => setRange({ min: e.currentTarget.value })} />
                </label>
                <label>
                  max
                  <input name={`max.${name}`} inputMode="decimal" value={range.max} onInput={(e) => setRange({ max: e.currentTarget.value })} />
                </label>
                <label>
                  step
                  <input name={`step.${name}`} inputMode="decimal" placeholder="any" value={range.step} onInput={(e) => setRange({ step: e.currentTarget.value })} />
                </label>
              </>
            ) : null}
          </div>
        )
      })}
      {value.mode === 'random' ? (
        <div class="swept">
          <label>
            Samples
            <input type="number" name="samples" min={1} max={10000} step={1} value={value.samples} onInput={(e) => set({ samples: e.currentTarget.value })} />
          </label>
          <label>
            Seed
            <input type="number" name="seed" min={0} step={1} value={value.seed} onInput={(e) => set({ seed: e.currentTarget.value })} />
          </label>
        </div>
      ) : null}
      <p class="hint" data-testid="configurations" data-count={size ?? ''}>
        {size === undefined ? 'Pick parameters and their values.' : `${size.toLocaleString('en-US')} configurations${size > 10_000 ? ': more than the 10,000 a sweep may run' : ''}`}
      </p>
    </fieldset>
  )
}
