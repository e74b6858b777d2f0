import { invalidParameter } from './errors.js'

/** A keyset position: the sort time and the id that breaks ties. */
export interface KeysetPosition {
  time: Date
  id: string
}

/** Opaque cursor: base64url of JSON [ISO time, id] (DESIGN §5). */
export function encodeCursor(position: KeysetPosition): string {
  return encodeCursorJson([position.time.toISOString(), position.id])
}

/** Decodes a cursor from a previous next_cursor; 400 INVALID_PARAMETER for anything else. */
export function decodeCursor(cursor: string): KeysetPosition {
  const value = cursorJson(cursor)
  if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
    const time = new Date(value[0])
    if (storable(time) && /^[\w-]{1,64}$/.test(value[1])) return { time, id: value[1] }
  }
  throw notACursor()
}

/** Opaque cursor of any position: base64url of its JSON. */
export function encodeCursorJson(position: unknown[]): string {
  return Buffer.from(JSON.stringify(position)).toString('base64url')
}

/** The JSON inside a cursor of ours (base64url, at most 512 characters); undefined for anything else. */
export function cursorJson(cursor: string): unknown {
  if (!/^[A-Za-z0-9_-]{1,512}$/.test(cursor)) return undefined
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
}

/** 400 on `cursor`: what a route answers for a cursor it never handed out (`context`: e.g. " for this sort"). */
export const notACursor = (context = ''): Error => invalidParameter('cursor', `cursor is not a value returned as next_cursor${context}`)

/**
 * A whole number a PostgreSQL integer column holds, at least `min`: a cursor's run number such as
 * 9007199254740993 or 1e300 is an integer to JavaScript but makes the query fail (a 500), and was never
 * handed out (issue 37).
 */
export function isStorableInteger(value: unknown, min = 0): value is number {
  return Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= 2_147_483_647
}

// Years PostgreSQL timestamps hold and ids of our form only: anything else (a year -271821, an id with a
// NUL byte) is not a position we ever handed out, and would make the query fail with a 500.
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z')
const LATEST = Date.parse('9999-12-31T23:59:59.999Z')

function storable(time: Date): boolean {
  const ms = time.getTime()
  return ms >= EARLIEST && ms <= LATEST
}
