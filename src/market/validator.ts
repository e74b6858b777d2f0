import type { FastifySchemaCompiler } from 'fastify'
import type { TSchema } from 'typebox'
import { validatorCompiler } from '../http/validator.js'

const NUMBER_LITERAL = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/

/**
 * The app's validator, with the check it makes for integer query fields extended to numbers:
 * TypeBox converts an empty `?min_quote_volume=` to 0, where FastAPI's float parsing refuses it.
 * (It belongs in http/validator.ts beside the integer check; kept here while that file is not ours.)
 */
export const marketValidatorCompiler: FastifySchemaCompiler<TSchema> = (route) => {
  const validate = validatorCompiler(route)
  if (route.httpPart !== 'querystring') return validate
  const numberFields = Object.entries((route.schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {})
    .filter(([, property]) => property.type === 'number')
    .map(([name]) => name)
  if (numberFields.length === 0) return validate
  return (value: unknown) => {
    const raw = value as Record<string, unknown>
    const bad = numberFields.find((name) => typeof raw[name] === 'string' && !NUMBER_LITERAL.test(raw[name] as string))
    if (bad === undefined) return validate(value)
    return {
      error: [{ keyword: 'type', instancePath: `/${bad}`, schemaPath: `#/properties/${bad}`, params: { type: 'number' }, message: 'must be number' }],
    } as never
  }
}
