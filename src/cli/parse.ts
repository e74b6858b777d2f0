import fs from 'node:fs'
import { InvalidArgumentError } from 'commander'
import { UsageError } from './cli-errors.js'

// Parsers for flag values. They check only the form a flag needs to be sent (a number, JSON); what
// the values mean (a known template, a capital above the minimum) is the API's to judge, so its
// message, not a second copy of its rules, reaches the user.

/** An integer flag (--limit, --leverage). */
export function integer(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('not an integer.')
  return Number(value)
}

/** A TCP port flag (--port): 0 to 65535, 0 meaning any free port. */
export function port(value: string): number {
  const parsed = integer(value)
  if (parsed < 0 || parsed > 65535) throw new InvalidArgumentError('not a port (0 to 65535).')
  return parsed
}

/** A number flag (--min-quote-volume 50000000, 5e7). */
export function number(value: string): number {
  const parsed = Number(value)
  if (value.trim() === '' || !Number.isFinite(parsed)) throw new InvalidArgumentError('not a number.')
  return parsed
}

/** Unix ms, or an ISO 8601 time turned into Unix ms (--start-time on market reads). */
export function unixMs(value: string): number {
  if (/^\d+$/.test(value)) return Number(value)
  const parsed = Date.parse(value)
  if (Number.isNaN(parsed)) throw new InvalidArgumentError('not Unix milliseconds nor an ISO 8601 time.')
  return parsed
}

/** A comma-separated list that may also be repeated: --symbols BTCUSDT,ETHUSDT --symbols SOLUSDT. */
export function list(value: string, previous: string[] | undefined): string[] {
  const items = value.split(',').map((item) => item.trim()).filter((item) => item !== '')
  return [...(previous ?? []), ...items]
}

/** --param name=value, repeatable; the value is read as JSON when it is JSON (10, true, [1,2]) and as a string otherwise. */
export function keyValue(value: string, previous: Record<string, unknown> | undefined): Record<string, unknown> {
  const at = value.indexOf('=')
  if (at <= 0) throw new InvalidArgumentError('expected name=value.')
  const raw = value.slice(at + 1)
  let parsed: unknown = raw
  try {
    parsed = JSON.parse(raw)
  } catch {
    // a plain string
  }
  return { ...previous, [value.slice(0, at)]: parsed }
}

/** A JSON object given inline (--params '{"fast":10}'). */
export function jsonObject(value: string): Record<string, unknown> {
  let parsed: unknown
  try {
    parsed = JSON.parse(value)
  } catch (error) {
    throw new InvalidArgumentError(`not JSON: ${(error as Error).message}.`)
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError('must be a JSON object.')
  return parsed as Record<string, unknown>
}

/** A request body from a JSON file (`-` reads stdin): the base that flags then override. */
export function readJsonFile(file: string): Record<string, unknown> {
  let text: string
  try {
    text = fs.readFileSync(file === '-' ? 0 : file, 'utf8')
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`)
  }
  try {
    const parsed = JSON.parse(text) as unknown
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as Record<string, unknown>
  } catch (error) {
    throw new UsageError(`${file} is not JSON: ${(error as Error).message}`)
  }
  throw new UsageError(`${file} must hold a JSON object (the request body)`)
}

/**
 * A body from `--file` and flags: flags win field by field, inside objects too (--stop-loss changes the
 * file's exits.stop_loss and keeps its take_profit); params merge (the file's, then --params, then each --param).
 */
export function bodyFrom(file: string | undefined, fields: Record<string, unknown>, params: { json?: Record<string, unknown>; pairs?: Record<string, unknown> }): Record<string, unknown> {
  const body = withFields(file === undefined ? {} : readJsonFile(file), fields)
  if (params.json !== undefined || params.pairs !== undefined) {
    const base = typeof body.params === 'object' && body.params !== null && !Array.isArray(body.params) ? (body.params as Record<string, unknown>) : {}
    body.params = { ...base, ...params.json, ...params.pairs }
  }
  return body
}

/** `body` with the defined `fields` over it, objects merged key by key (a flag's exits over a file's). */
export function withFields(body: Record<string, unknown>, fields: Record<string, unknown>): Record<string, unknown> {
  const merged = { ...body }
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue
    const base = merged[key]
    merged[key] = isObject(value) && isObject(base) ? { ...base, ...value } : value
  }
  return merged
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
