import { Value } from 'typebox/value'
import { TEMPLATES, defaultsOf, findTemplate } from './registry.js'
import type { Checked, ParamProblem, Template } from './types.js'

// Pure checks of a request's template, params and symbols: each answers the first ParamProblem rather
// than throwing, and the callers at the edge turn it into their 400 INVALID_PARAMETER (http/errors.ts).

export interface PropertySchema {
  type?: string
  minimum?: number
  maximum?: number
}

/** The template with this id, or the problem naming template_id. */
export function templateById(templateId: string): Checked<Template> {
  const template = findTemplate(templateId)
  if (template) return { ok: true, value: template }
  return problem('template_id', `unknown template_id "${templateId}"; one of ${TEMPLATES.map((t) => t.id).join(', ')}`)
}

/**
 * The template's params with defaults applied, or the first field at fault (`params.fast must be an
 * integer between 2 and 999`, field `params.fast`). Unknown fields are refused rather than ignored: a
 * typo (`fats`) silently running the default would be worse than an error. Works for a user's module
 * too, which the registry does not hold.
 */
export function resolveParams(template: Template, params: unknown): Checked<Record<string, unknown>> {
  if (params === undefined || params === null) params = {}
  if (typeof params !== 'object' || Array.isArray(params)) return problem('params', 'params must be an object')
  const given = params as Record<string, unknown>
  const properties = template.schema.properties as Record<string, PropertySchema>
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(properties, name)) {
      return problem(`params.${name}`, `params.${name} is not a parameter of ${template.id}; its parameters are ${Object.keys(properties).join(', ')}`)
    }
  }
  const resolved = defaultsOf(template)
  for (const [name, schema] of Object.entries(properties)) {
    if (given[name] === undefined) continue
    const wrong = valueProblem(`params.${name}`, schema, given[name])
    if (wrong) return { ok: false, problem: wrong }
    resolved[name] = given[name]
  }
  const refined = template.refine?.(resolved as never)
  if (refined) return { ok: false, problem: refined }
  // The checks above mirror the schema for readable messages; the schema stays the authority.
  if (!Value.Check(template.schema, resolved)) return problem('params', `params do not match the ${template.id} schema`)
  return { ok: true, value: resolved }
}

/** The problem (field symbols) when the symbol count does not suit the template. */
export function symbolsProblem(template: Template, symbols: readonly string[]): ParamProblem | undefined {
  if (!template.multiSymbol && symbols.length !== 1) return { field: 'symbols', message: `${template.id} trades one symbol; symbols must have exactly 1 entry` }
  if (template.multiSymbol && symbols.length < template.minSymbols) return { field: 'symbols', message: `${template.id} needs at least ${template.minSymbols} symbols` }
  return undefined
}

/** The problem naming `field` when the value does not suit one param's schema (type and bounds). */
export function valueProblem(field: string, schema: PropertySchema, value: unknown): ParamProblem | undefined {
  if (schema.type === 'boolean') return typeof value === 'boolean' ? undefined : { field, message: `${field} must be true or false` }
  const integer = schema.type === 'integer'
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (!integer || Number.isInteger(value)) &&
    (schema.minimum === undefined || value >= schema.minimum) &&
    (schema.maximum === undefined || value <= schema.maximum)
  return ok ? undefined : { field, message: `${field} must be ${integer ? 'an integer' : 'a number'} ${range(schema)}`.trimEnd() }
}

function problem(field: string, message: string): { ok: false; problem: ParamProblem } {
  return { ok: false, problem: { field, message } }
}

function range({ minimum, maximum }: PropertySchema): string {
  if (minimum !== undefined && maximum !== undefined) return `between ${minimum} and ${maximum}`
  if (minimum !== undefined) return `≥ ${minimum}`
  if (maximum !== undefined) return `≤ ${maximum}`
  return ''
}
