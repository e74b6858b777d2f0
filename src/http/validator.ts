import { TypeBoxValidatorCompiler } from '@fastify/type-provider-typebox'
import type { FastifySchemaCompiler } from 'fastify'
import type { TSchema } from 'typebox'
import { Compile } from 'typebox/compile'

const INTEGER_LITERAL = /^[+-]?\d+$/

/**
 * TypeBox's validator, with one correction for path and query strings: its conversion truncates
 * "1.5" to the integer 1, so `/strategies/1.5` would read strategy 1. Here an integer field given as
 * a string must be an integer literal, else it fails as FastAPI's int parsing does.
 */
export const validatorCompiler: FastifySchemaCompiler<TSchema> = (route) => {
  const validate = TypeBoxValidatorCompiler(route)
  if (route.httpPart === 'body') return validate
  if (onlyStrings(route.schema)) {
    // TypeBox's compiler runs Value.Convert on every request (2.6 % of a signed GET's CPU, profiled);
    // converting a string to a string changes nothing, so a value that passes as sent is returned as sent.
    const check = Compile(route.schema)
    return (value: unknown) => (check.Check(value) ? { value } : validate(value))
  }
  const integerFields = Object.entries((route.schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {})
    .filter(([, property]) => property.type === 'integer')
    .map(([name]) => name)
  if (integerFields.length === 0) return validate
  return (value: unknown) => {
    const raw = value as Record<string, unknown>
    const bad = integerFields.find((name) => typeof raw[name] === 'string' && !INTEGER_LITERAL.test(raw[name] as string))
    if (bad === undefined) return validate(value)
    return {
      error: [{ keyword: 'type', instancePath: `/${bad}`, schemaPath: `#/properties/${bad}`, params: { type: 'integer' }, message: 'must be integer' }],
    } as never
  }
}

/** An object schema whose every property is a plain string (path parameters such as {id}). */
function onlyStrings(schema: TSchema): boolean {
  const { type, properties } = schema as { type?: unknown; properties?: Record<string, Record<string, unknown>> }
  if (type !== 'object' || properties === undefined) return false
  return Object.values(properties).every((property) => property.type === 'string' && property.anyOf === undefined)
}
