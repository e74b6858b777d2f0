import type { TemplateInfo } from '../api/types.js'

interface PropertySchema {
  type?: string
  enum?: unknown[]
  minimum?: number
  maximum?: number
  default?: unknown
  description?: string
}

export type Params = Record<string, unknown>

/** The template's defaults: where a form starts. */
export function defaultsOf(template: TemplateInfo): Params {
  return { ...template.defaults }
}

/**
 * One input per property of the template's params JSON schema (GET /v1/templates), typed by the
 * schema: integers and numbers with their bounds, booleans as checkboxes, enums as selects.
 * Nothing about any template is written here; a new template needs no dashboard change.
 */
export function ParamsEditor({ template, value, onChange }: { template: TemplateInfo; value: Params; onChange: (next: Params) => void }) {
  const properties = ((template.params_schema as { properties?: Record<string, PropertySchema> }).properties ?? {}) as Record<string, PropertySchema>
  const set = (name: string, v: unknown) => onChange({ ...value, [name]: v })
  return (
    <fieldset class="params" data-testid="params">
      <legend>Parameters</legend>
      {Object.entries(properties).map(([name, schema]) => (
        <label key={name} title={schema.description} class={schema.type === 'boolean' ? 'check' : ''}>
          {schema.type === 'boolean' ? (
            <>
              <input type="checkbox" name={`param.${name}`} data-param={name} checked={value[name] === true} onChange={(e) => set(name, e.currentTarget.checked)} />
              {name}
            </>
          ) : (
            <>
              {name}
              {schema.enum ? (
                <select name={`param.${name}`} data-param={name} value={String(value[name] ?? '')} onChange={(e) => set(name, e.currentTarget.value)}>
                  {schema.enum.map((option) => (
                    <option key={String(option)} value={String(option)}>
                      {String(option)}
                    </option>
                  ))}
                </select>
              ) : schema.type === 'integer' || schema.type === 'number' ? (
                <input
                  type="number"
                  name={`param.${name}`}
                  data-param={name}
                  required
                  step={schema.type === 'integer' ? 1 : 'any'}
                  min={schema.minimum}
                  max={schema.maximum}
                  value={value[name] === undefined ? '' : String(value[name])}
                  onInput={(e) => set(name, e.currentTarget.value === '' ? undefined : Number(e.currentTarget.value))}
                />
              ) : (
                <input name={`param.${name}`} data-param={name} value={String(value[name] ?? '')} onInput={(e) => set(name, e.currentTarget.value)} />
              )}
              {schema.description ? <small>{schema.description}</small> : null}
            </>
          )}
        </label>
      ))}
    </fieldset>
  )
}
