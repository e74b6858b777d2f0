/** One failure as the schema validator reports it (Ajv's shape, which TypeBox's compiler follows). */
export interface SchemaIssue {
  keyword: string
  instancePath: string
  schemaPath?: string
  params: Record<string, unknown>
  message?: string
}

/**
 * The failures of one request, readable: a field whose value matched none of a union's alternatives
 * is reported by the validator once per alternative plus once for the union ("must be equal to
 * constant" ×2, "must match a schema in anyOf"). Those become one issue naming what the field
 * accepts. When an alternative of the right type failed deeper inside (an object's field), its own
 * issues stand and the union's are dropped: they say where the problem is.
 */
export function readableIssues(issues: readonly SchemaIssue[]): SchemaIssue[] {
  // Innermost unions first, so a union inside an alternative is summarised before its parent looks.
  const unions = issues.filter((issue) => issue.keyword === 'anyOf' && issue.schemaPath !== undefined).sort((a, b) => b.schemaPath!.length - a.schemaPath!.length)
  let remaining = [...issues]
  for (const union of unions) {
    if (!remaining.includes(union)) continue
    const prefix = `${union.schemaPath}/anyOf/`
    const branches = remaining.filter((issue) => issue.schemaPath?.startsWith(prefix))
    const deeper = branches.filter((issue) => issue.instancePath.length > union.instancePath.length)
    remaining = remaining.filter((issue) => issue !== union && (!branches.includes(issue) || deeper.includes(issue)))
    if (deeper.length === 0) remaining.push(summarise(union, branches))
  }
  return remaining
}

/** An `anyOf` issue whose params say what it accepts: `allowedValues` (constants) or `types`. */
function summarise(union: SchemaIssue, branches: readonly SchemaIssue[]): SchemaIssue {
  const values = branches.flatMap((issue) =>
    issue.keyword === 'const' ? [issue.params.allowedValue] : issue.keyword === 'enum' ? ((issue.params.allowedValues as unknown[] | undefined) ?? []) : [],
  )
  const types = branches.flatMap((issue) => (issue.keyword === 'type' ? [String(issue.params.type)] : []))
  // Constants, or constants and null (an optional enum): one set of allowed values.
  if (values.length > 0 && values.length + types.length === branches.length && types.every((type) => type === 'null')) {
    return { keyword: 'enum', instancePath: union.instancePath, schemaPath: union.schemaPath, params: { allowedValues: [...values, ...types.map(() => null)] } }
  }
  if (types.length === branches.length) return { keyword: 'type', instancePath: union.instancePath, schemaPath: union.schemaPath, params: { type: types.join(' or ') } }
  return union
}

/**
 * The API's one wording for a value outside a set, in /v1 messages and our own refusals alike:
 * `must be one of 1m, 5m, 15m, 1h, 4h, 1d; got "2h"` (`got` already quoted, see quoted()).
 */
export function oneOfMessage(allowed: readonly unknown[], got?: string): string {
  const list = allowed.map((value) => (typeof value === 'string' ? value : JSON.stringify(value))).join(', ')
  return `must be one of ${list}${got === undefined ? '' : `; got ${got}`}`
}

/**
 * Pydantic's wording for a value outside a set: "Input should be 'BUY' or 'SELL'". Only the `msg` of a
 * public route's 422 items, which keep the original FastAPI service's shape for its clients.
 */
export function enumMessage(allowed: readonly unknown[]): string {
  const shown = allowed.map((value) => (typeof value === 'string' ? `'${value}'` : JSON.stringify(value)))
  const list = shown.length > 1 ? `${shown.slice(0, -1).join(', ')} or ${shown[shown.length - 1]}` : (shown[0] ?? '')
  return `Input should be ${list}`
}

/**
 * The value a JSON pointer names inside `root` (a parsed body, query or path), walked in a loop;
 * undefined when absent.
 */
export function valueAt(root: unknown, pointer: string): unknown {
  let value = root
  for (const part of pointer.split('/').filter(Boolean)) {
    if (typeof value !== 'object' || value === null) return undefined
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~')
    value = Object.hasOwn(value, key) ? (value as Record<string, unknown>)[key] : undefined
  }
  return value
}

/** A short quotation of a refused value: strings and numbers up to 40 characters, else its kind. */
export function quoted(value: unknown): string | undefined {
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  if (typeof value !== 'string') return undefined
  return value.length <= 40 ? JSON.stringify(value) : `${JSON.stringify(value.slice(0, 40))}…`
}
