import { Value } from 'typebox/value'
import { AppError, invalidParameter } from '../http/errors.js'
import { TEMPLATES, defaultsOf, findTemplate } from './registry.js'
import type { Template } from './types.js'

export interface PropertySchema {
  type?: string
  minimum?: number
  maximum?: number
}

/** The template with this id, or 400 INVALID_PARAMETER naming template_id. */
export function getTemplate(templateId: string): Template {
  const template = findTemplate(templateId)
  if (!template) {
    throw invalidParameter('template_id', `unknown template_id "${templateId}"; one of ${TEMPLATES.map((t) => t.id).join(', ')}`)
  }
  return template
}

/**
 * The template's params with defaults applied, or 400 INVALID_PARAMETER naming the first field at fault
 * (`params.fast must be an integer between 2 and 999`, field `params.fast`). Unknown fields are refused
 * rather than ignored: a typo (`fats`) silently running the default would be worse than an error.
 */
export function validateParams(templateId: string, params: unknown): Record<string, unknown> {
  return validateParamsOf(getTemplate(templateId), params)
}

/** validateParams for a template already in hand (a user's module, which the registry does not hold). */
export function validateParamsOf(template: Template, params: unknown): Record<string, unknown> {
  if (params === undefined || params === null) params = {}
  if (typeof params !== 'object' || Array.isArray(params)) throw invalidParameter('params', 'params must be an object')
  const given = params as Record<string, unknown>
  const properties = template.schema.properties as Record<string, PropertySchema>
  for (const name of Object.keys(given)) {
    if (!Object.hasOwn(properties, name)) {
      throw invalidParameter(
        `params.${name}`,
        `params.${name} is not a parameter of ${template.id}; its parameters are ${Object.keys(properties).join(', ')}`,
      )
    }
  }
  const resolved = defaultsOf(template)
  for (const [name, schema] of Object.entries(properties)) {
    if (given[name] === undefined) continue
    checkValue(`params.${name}`, schema, given[name])
    resolved[name] = given[name]
  }
  const problem = template.refine?.(resolved as never)
  if (problem) throw invalidParameter(problem.field, problem.message)
  // The checks above mirror the schema for readable messages; the schema stays the authority.
  if (!Value.Check(template.schema, resolved)) throw new AppError('INVALID_PARAMETER', `params do not match the ${template.id} schema`, { field: 'params' })
  return resolved
}

/** 400 INVALID_PARAMETER (field symbols) unless the symbol count suits the template. */
export function validateSymbols(templateId: string, symbols: readonly string[]): void {
  validateSymbolsOf(getTemplate(templateId), symbols)
}

/** validateSymbols for a template already in hand. */
export function validateSymbolsOf(template: Template, symbols: readonly string[]): void {
  if (!template.multiSymbol && symbols.length !== 1) {
    throw invalidParameter('symbols', `${template.id} trades one symbol; symbols must have exactly 1 entry`)
  }
  if (template.multiSymbol && symbols.length < template.minSymbols) {
    throw invalidParameter('symbols', `${template.id} needs at least ${template.minSymbols} symbols`)
  }
}

/** 400 INVALID_PARAMETER naming `field` unless the value suits one param's schema (type and bounds). */
export function checkValue(field: string, schema: PropertySchema, value: unknown): void {
  if (schema.type === 'boolean') {
    if (typeof value !== 'boolean') throw invalidParameter(field, `${field} must be true or false`)
    return
  }
  const integer = schema.type === 'integer'
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (!integer || Number.isInteger(value)) &&
    (schema.minimum === undefined || value >= schema.minimum) &&
    (schema.maximum === undefined || value <= schema.maximum)
  if (!ok) throw invalidParameter(field, `${field} must be ${integer ? 'an integer' : 'a number'} ${range(schema)}`.trimEnd())
}

function range({ minimum, maximum }: PropertySchema): string {
  if (minimum !== undefined && maximum !== undefined) return `between ${minimum} and ${maximum}`
  if (minimum !== undefined) return `≥ ${minimum}`
  if (maximum !== undefined) return `≤ ${maximum}`
  return ''
}
