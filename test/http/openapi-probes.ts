/**
 * Bad requests derived from the app's own OpenAPI document, so every route — including ones added
 * later — gets the same hostile input without anyone writing a case for it.
 */

export interface JsonSchema {
  type?: string
  enum?: unknown[]
  nullable?: boolean
  anyOf?: JsonSchema[]
  properties?: Record<string, JsonSchema>
  required?: string[]
  minProperties?: number
  items?: JsonSchema
  minimum?: number
  maximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  pattern?: string
  format?: string
  example?: unknown
  default?: unknown
}

interface Parameter {
  in: string
  name: string
  required?: boolean
  schema: JsonSchema
}

interface OpenApiOperation {
  parameters?: Parameter[]
  requestBody?: { content: Record<string, { schema: JsonSchema }> }
  responses: Record<string, unknown>
}

export interface OpenApiDocument {
  openapi: string
  paths: Record<string, Record<string, OpenApiOperation>>
}

export interface Operation {
  method: string
  /** The OpenAPI path template, e.g. /strategies/{strategy_id}. */
  path: string
  parameters: Parameter[]
  body: JsonSchema | undefined
}

/** How the app must answer a probe. */
export type Refusal =
  | { kind: 'validation'; field?: string }
  | { kind: 'too-large' }
  | { kind: 'media-type' }
  /** A path value that is well-formed but names nothing, or is malformed: 404 or a validation error. */
  | { kind: 'path' }
  /** Undeclared query parameters on a read: ignored (as FastAPI does) or refused, never a 5xx. */
  | { kind: 'ignored' }

export interface Probe {
  operation: Operation
  label: string
  url: string
  /** The exact body sent (a Buffer for bytes that are not UTF-8); undefined sends none. */
  payload: string | Buffer | undefined
  contentType: string | undefined
  refusal: Refusal
}

/** Values that stand in for path parameters, by schema type: ids of records that exist. */
export interface PathValues {
  integer: string
  string: string
}

const ONE_MB = 1024 * 1024
const HUGE = ['1e400', '99999999999999999999999', '-99999999999999999999999']
const WRONG_VALUES: unknown[] = [12345, 1.5, 'text', true, null, ['x'], { nested: 1 }]
const MALFORMED_JSON = ['{"a":', '[1,2', 'nul', '{"a":1}}', "{'a':1}", '{"__proto__":{"polluted":1}}']
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])

/** Every documented operation except the documentation itself. */
export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = []
  for (const [path, methods] of Object.entries(document.paths)) {
    if (path === '/openapi.json' || path.startsWith('/docs')) continue
    for (const [method, operation] of Object.entries(methods)) {
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: operation.parameters ?? [],
        body: operation.requestBody?.content['application/json']?.schema,
      })
    }
  }
  return operations
}

/** All bad requests for one operation. */
export function probesFor(operation: Operation, pathValues: PathValues): Probe[] {
  const url = fillPath(operation, pathValues, {})
  const probe = (label: string, fields: Partial<Probe> & Pick<Probe, 'refusal'>): Probe => ({
    operation,
    label: `${operation.method} ${operation.path}: ${label}`,
    url,
    payload: operation.body ? JSON.stringify(sample(operation.body)) : undefined,
    contentType: 'application/json',
    ...fields,
  })
  const probes: Probe[] = []
  if (BODY_METHODS.has(operation.method)) {
    for (const text of MALFORMED_JSON) probes.push(probe(`malformed JSON ${text}`, { payload: text, refusal: { kind: 'validation' } }))
    probes.push(probe('a body over 1 MB', { payload: oversizedJson(), refusal: { kind: 'too-large' } }))
    probes.push(probe('a text/plain body', { payload: 'name=x', contentType: 'text/plain', refusal: { kind: 'media-type' } }))
    const form = 'application/x-www-form-urlencoded'
    probes.push(probe('a form body', { payload: 'name=x', contentType: form, refusal: { kind: 'media-type' } }))
    probes.push(probe('a body without content-type', { payload: '{}', contentType: undefined, refusal: { kind: 'media-type' } }))
  }
  if (operation.body) probes.push(...bodyProbes(operation.body, probe))
  if (operation.method === 'GET' && !operation.parameters.some((p) => p.in === 'query')) {
    const stray = `${url}?limit=1e400&id=99999999999999999999999&q=%00&q=x`
    probes.push(probe('undeclared query parameters', { url: stray, refusal: { kind: 'ignored' } }))
  }
  for (const parameter of operation.parameters) {
    if (parameter.in === 'query') probes.push(...queryProbes(parameter, url, probe, requiredQuery(operation.parameters, parameter.name)))
    if (parameter.in === 'path') {
      for (const value of badPathValues(parameter.schema)) {
        const bad = fillPath(operation, pathValues, { [parameter.name]: value })
        probes.push(probe(`path ${parameter.name}=${value}`, { url: bad, refusal: { kind: 'path' } }))
      }
    }
  }
  return probes
}

type MakeProbe = (label: string, fields: Partial<Probe> & Pick<Probe, 'refusal'>) => Probe

function bodyProbes(schema: JsonSchema, probe: MakeProbe): Probe[] {
  const probes: Probe[] = []
  const valid = sample(schema) as Record<string, unknown>
  // A body schema with no required property admits an absent body (e.g. cancel's optional reason).
  const optional = (schema.required ?? []).length === 0
  for (const wrong of ['[]', '[{}]', '"text"', '12345', 'null', 'true', ...(optional ? [] : [''])]) {
    probes.push(probe(`top-level body ${wrong || '(empty)'}`, { payload: wrong, refusal: { kind: 'validation' } }))
  }
  // Nothing may recurse on client data: 10,000 levels (20 kB) overflowed a recursive check with a 500.
  probes.push(probe('a body nested 10,000 levels deep', { payload: deeplyNested(), refusal: { kind: 'validation' } }))
  const stringField = Object.keys(valid).find((name) => typeof valid[name] === 'string')
  for (const bytes of stringField === undefined ? [] : INVALID_UTF8) {
    // Bytes Node would silently read as U+FFFD, inside a string field of an otherwise valid body.
    const [head = '', tail = ''] = JSON.stringify({ ...valid, [stringField!]: STRING_MARK }).split(STRING_MARK)
    const payload = Buffer.concat([Buffer.from(head), Buffer.from(bytes), Buffer.from(tail)])
    probes.push(probe(`${stringField} with invalid UTF-8 ${Buffer.from(bytes).toString('hex')}`, { payload, refusal: { kind: 'validation' } }))
  }
  const latin1 = Buffer.from(JSON.stringify(valid), 'latin1')
  probes.push(probe('a body declared charset=latin1', { payload: latin1, contentType: 'application/json; charset=latin1', refusal: { kind: 'media-type' } }))
  const extra = JSON.stringify({ ...valid, unexpected_field: 1 })
  probes.push(probe('an unknown extra field', { payload: extra, refusal: { kind: 'validation', field: 'unexpected_field' } }))
  for (const [field, fieldSchema] of Object.entries(schema.properties ?? {})) {
    for (const wrong of WRONG_VALUES.filter((value) => !hasAllowedType(fieldSchema, value))) {
      const payload = JSON.stringify({ ...valid, [field]: wrong })
      probes.push(probe(`${field}=${JSON.stringify(wrong)}`, { payload, refusal: { kind: 'validation', field } }))
    }
    const nested = JSON.stringify({ ...valid, [field]: STRING_MARK }).replace(`"${STRING_MARK}"`, deeplyNested())
    probes.push(probe(`${field} nested 10,000 levels deep`, { payload: nested, refusal: { kind: 'validation', field } }))
    for (const bad of unstorableValues(fieldSchema)) {
      const payload = JSON.stringify({ ...valid, [field]: bad })
      probes.push(probe(`${field}=${JSON.stringify(bad)}`, { payload, refusal: { kind: 'validation', field } }))
    }
    if (typesOf(fieldSchema).has('object') && !fieldSchema.properties) {
      // Inside a free-form object 1e400 would parse to Infinity and be stored as null: refused instead.
      const payload = JSON.stringify({ ...valid, [field]: { k: '\u0000huge' } }).replace('"\\u0000huge"', '1e400')
      probes.push(probe(`${field}={"k":1e400}`, { payload, refusal: { kind: 'validation', field: `${field}.k` } }))
    }
    for (const huge of HUGE) {
      if (acceptsHugeNumbers(fieldSchema)) continue
      // Written into the JSON text as is: JSON.stringify cannot produce 1e400.
      const payload = JSON.stringify({ ...valid, [field]: '\u0000huge' }).replace('"\\u0000huge"', huge)
      probes.push(probe(`${field}=${huge}`, { payload, refusal: { kind: 'validation', field } }))
    }
  }
  return probes
}

const STRING_MARK = 'probe_mark'
// A lone continuation byte, an overlong '/', a surrogate half's encoding, and a truncated sequence.
const INVALID_UTF8 = [[0xff, 0xfe], [0x80], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]]

function deeplyNested(levels = 10_000): string {
  return '['.repeat(levels) + ']'.repeat(levels)
}

/** Text PostgreSQL cannot store: NUL, and a surrogate half without its partner. */
function unstorableValues(schema: JsonSchema): unknown[] {
  const types = typesOf(schema)
  const values: unknown[] = []
  if (types.has('string')) values.push('a\u0000b', 'a\ud800b')
  const freeForm = types.has('object') && !schema.properties
  if (freeForm) values.push({ k: 'a\u0000b' }, { 'a\u0000b': 1 }, { k: '\udc00' }, { k: { k: ['\u0000'] } })
  return values
}

/** The other required query parameters with valid values ("a=…&"), so a probe's refusal is about its own parameter. */
function requiredQuery(parameters: Parameter[], except: string): string {
  return parameters
    .filter((p) => p.in === 'query' && p.required === true && p.name !== except)
    .map((p) => `${p.name}=${encodeURIComponent(String(sample(p.schema)))}&`)
    .join('')
}

function queryProbes(parameter: Parameter, url: string, probe: MakeProbe, others = ''): Probe[] {
  const { name, schema } = parameter
  const values: string[] = []
  const types = typesOf(schema)
  if (types.has('integer') || types.has('number')) {
    values.push('abc', '', ...(acceptsHugeNumbers(schema) ? [] : HUGE))
    if (schema.minimum !== undefined) values.push(String(schema.minimum - 1))
    if (schema.maximum !== undefined) values.push(String(schema.maximum + 1))
  }
  if (types.has('integer')) values.push('1.5')
  if (schema.enum) values.push('not-a-member', '99999999999999999999999')
  if (schema.maxLength !== undefined) values.push('x'.repeat(schema.maxLength + 1))
  if (types.has('string')) values.push('a\u0000b')
  if (name === 'cursor') values.push(...forgedCursors())
  const once = encodeURIComponent(String(sample(schema)))
  const query = values.map((value) => `${name}=${encodeURIComponent(value)}`)
  query.push(`${name}=${once}&${name}=${once}`) // a repeated parameter arrives as an array
  return query.map((q) => probe(`query ${q.slice(0, 60)}`, { url: `${url}?${others}${q}`, refusal: { kind: 'validation', field: name } }))
}

/** Well-encoded cursors (DESIGN §5: base64url of [time, id]) holding positions no page ever had. */
function forgedCursors(): string[] {
  const positions = [
    ['-271821-04-20T00:00:00.000Z', 'strat_00000000'],
    ['2026-01-01T00:00:00.000Z', 'a\u0000b'],
    ['not a time', 'strat_00000000'],
    ['2026-01-01T00:00:00.000Z', 'x'.repeat(65)],
  ]
  return positions.map((position) => Buffer.from(JSON.stringify(position)).toString('base64url'))
}

function badPathValues(schema: JsonSchema): string[] {
  // Beyond Fastify's 100-character parameter limit; malformed and NUL %-escapes; a lone surrogate's UTF-8.
  const values = ['99999999999999999999999', '-99999999999999999999999', 'x'.repeat(101), '%E0%A4%A', '%00', '%ED%A0%80']
  if (typesOf(schema).has('integer')) values.push('abc', '1.5', '1e400', '0x10', '%201')
  if (schema.maxLength !== undefined) values.push('x'.repeat(schema.maxLength + 1))
  return values
}

function fillPath(operation: Operation, values: PathValues, overrides: Record<string, string>): string {
  return operation.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    if (overrides[name] !== undefined) return overrides[name]
    const parameter = operation.parameters.find((p) => p.in === 'path' && p.name === name)
    return typesOf(parameter?.schema ?? {}).has('integer') ? values.integer : values.string
  })
}

/** 1_048_577 bytes of valid JSON: one byte over the limit. */
function oversizedJson(): string {
  const shell = '{"name":""}'
  return `{"name":"${'x'.repeat(ONE_MB + 1 - shell.length)}"}`
}

/** A value the schema accepts (for the fields a probe does not break). */
export function sample(schema: JsonSchema): unknown {
  if (schema.example !== undefined) return schema.example
  if (schema.default !== undefined) return schema.default
  if (schema.enum) return schema.enum[0]
  if (schema.anyOf?.[0]) return sample(schema.anyOf[0])
  switch (schema.type) {
    case 'integer':
    case 'number':
      return schema.minimum ?? 1
    case 'boolean':
      return true
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => sample(schema.items ?? {}))
    case 'object': {
      // The smallest valid object, so a probe that breaks one field breaks nothing else (no rename on PUT).
      const properties = Object.entries(schema.properties ?? {})
      const required = new Set(schema.required ?? [])
      const chosen = properties.filter(([name]) => required.has(name))
      for (const entry of properties) if (chosen.length < (schema.minProperties ?? 0) && !chosen.includes(entry)) chosen.push(entry)
      return Object.fromEntries(chosen.map(([name, property]) => [name, sample(property)]))
    }
    case 'string':
      return sampleString(schema)
  }
  return 'text'
}

const STRING_CANDIDATES = ['BTCUSDT', 'sma_cross', 'sample text', 'https://example.com/hook', '0.5']

function sampleString(schema: JsonSchema): string {
  if (schema.format === 'date-time') return '2026-01-01T00:00:00.000Z'
  const fits = (text: string) =>
    text.length >= (schema.minLength ?? 0) &&
    text.length <= (schema.maxLength ?? Infinity) &&
    (!schema.pattern || new RegExp(schema.pattern).test(text))
  const found = STRING_CANDIDATES.find(fits)
  if (found === undefined) throw new Error(`no sample string fits ${JSON.stringify(schema)}; add one to STRING_CANDIDATES`)
  return found
}

/** The JSON types a schema admits; empty when it admits anything. */
function typesOf(schema: JsonSchema): Set<string> {
  const types = new Set<string>()
  if (schema.type) types.add(schema.type)
  if (schema.nullable) types.add('null')
  for (const option of schema.anyOf ?? []) for (const type of typesOf(option)) types.add(type)
  for (const value of schema.enum ?? []) types.add(jsonType(value))
  return types
}

function jsonType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

function hasAllowedType(schema: JsonSchema, value: unknown): boolean {
  const types = typesOf(schema)
  const type = jsonType(value)
  return types.size === 0 || types.has(type) || (type === 'integer' && types.has('number'))
}

/** An unbounded decimal number may legitimately be huge; everything else must refuse it. */
function acceptsHugeNumbers(schema: JsonSchema): boolean {
  return typesOf(schema).has('number') && schema.maximum === undefined
}
