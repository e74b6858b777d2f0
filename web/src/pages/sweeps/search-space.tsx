import type { TemplateInfo } from '../../api/types.js'
import { gridSize, type PropertySchema, type SearchSpaceDraft, sweepableParams } from './search-space-draft.js'

/** Which parameters to sweep and over what: a grid of values each, or ranges to draw from. */
export function SearchSpace({ template, value, onChange }: { template: TemplateInfo; value: SearchSpaceDraft; onChange: (next: SearchSpaceDraft) => void }) {
  const params = sweepableParams(template)
  const set = (patch: Partial<SearchSpaceDraft>) => onChange({ ...value, ...patch })
  // A parameter switched on starts from its schema: a switch's two values, a number's bounds.
  const toggle = (name: string, schema: PropertySchema, on: boolean) =>
    set({
      swept: on ? [...value.swept, name] : value.swept.filter((n) => n !== name),
      switches: schema.type === 'boolean' ? (on ? [...value.switches, name] : value.switches.filter((n) => n !== name)) : value.switches,
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
            {on && value.mode === 'random' && schema.type === 'boolean' ? <small class="error">a switch is swept in a grid only</small> : null}
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
            {on && value.mode === 'random' && schema.type !== 'boolean' ? (
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
      {'count' in size ? (
        <p class="hint" data-testid="configurations" data-count={size.count}>
          {`${size.count.toLocaleString('en-US')} configurations${size.count > 10_000 ? ': more than the 10,000 a sweep may run' : ''}`}
        </p>
      ) : size.problem ? (
        <p class="hint error" data-testid="configurations" data-count="" data-state="invalid">
          {size.problem}
        </p>
      ) : (
        <p class="hint" data-testid="configurations" data-count="">
          Pick parameters and their values.
        </p>
      )}
    </fieldset>
  )
}
