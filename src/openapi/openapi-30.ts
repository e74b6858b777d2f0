/** A JSON Schema node as TypeBox emits it and as OpenAPI 3.0 wants it (loosely typed: both dialects). */
export type SchemaNode = Record<string, unknown>

/**
 * One schema rewritten into OpenAPI 3.0's dialect of JSON Schema, structurally (a property that happens
 * to be called `examples` is left alone). TypeBox emits draft-2019 keywords that 3.0 forbids; a standard
 * linter counted 42 errors from them (issue 14):
 * - `examples: [a, …]` → `example: a` (3.0 has only the singular);
 * - tuples (`items: [A, B]`, `additionalItems: false`) → one `items` schema (A when every position has
 *   the same schema, else `anyOf` of them) with `minItems`/`maxItems` fixing the length;
 * - `const: v` → `enum: [v]`; numeric `exclusiveMinimum`/`exclusiveMaximum` → the 3.0 boolean form;
 * - `$id`, `$schema`, `$comment` and `patternProperties` (no 3.0 equivalent) are dropped, the last
 *   falling back to `additionalProperties` of its (single) schema.
 */
export function toOpenApi30(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(toOpenApi30)
  if (!isObject(schema)) return schema
  const out: SchemaNode = {}
  for (const [key, value] of Object.entries(schema)) {
    switch (key) {
      case '$id':
      case '$schema':
      case '$comment':
      case 'additionalItems':
        break
      case 'examples':
        if (Array.isArray(value) && value.length > 0 && !('example' in schema)) out.example = value[0]
        break
      case 'const':
        out.enum = [value]
        break
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        if (typeof value === 'number') {
          out[key === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value
          out[key] = true
        } else out[key] = value
        break
      case 'properties':
        out.properties = mapValues(value, toOpenApi30)
        break
      case 'patternProperties': {
        const patterns = Object.values(isObject(value) ? value : {})
        if (patterns.length === 1 && schema.additionalProperties === undefined) out.additionalProperties = toOpenApi30(patterns[0])
        break
      }
      case 'items':
        if (Array.isArray(value)) Object.assign(out, tupleItems(value, schema))
        else out.items = toOpenApi30(value)
        break
      case 'additionalProperties':
      case 'not':
        out[key] = typeof value === 'boolean' ? value : toOpenApi30(value)
        break
      case 'allOf':
      case 'anyOf':
      case 'oneOf':
        out[key] = (value as unknown[]).map(toOpenApi30)
        break
      default:
        out[key] = value
    }
  }
  return out
}

function tupleItems(items: unknown[], schema: SchemaNode): SchemaNode {
  const converted = items.map(toOpenApi30)
  const texts = new Set(converted.map((item) => JSON.stringify(item)))
  const fixed: SchemaNode = { minItems: schema.minItems ?? items.length }
  if (schema.additionalItems === false || schema.maxItems !== undefined) fixed.maxItems = schema.maxItems ?? items.length
  fixed.items = texts.size === 1 ? converted[0] : { anyOf: converted }
  return fixed
}

function isObject(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function mapValues(value: unknown, f: (v: unknown) => unknown): SchemaNode {
  return Object.fromEntries(Object.entries(isObject(value) ? value : {}).map(([k, v]) => [k, f(v)]))
}
