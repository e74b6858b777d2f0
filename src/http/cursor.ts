import { invalidParameter } from './errors.js'

/** A keyset position: the sort time and the id that breaks ties. */
export interface KeysetPosition {
  time: Date
  id: string
}

/** Opaque cursor: base64url of JSON [ISO time, id] (DESIGN §5). */
export function encodeCursor(position: KeysetPosition): string {
  return Buffer.from(JSON.stringify([position.time.toISOString(), position.id])).toString('base64url')
}

/** Decodes a cursor from a previous next_cursor; 400 INVALID_PARAMETER for anything else. */
export function decodeCursor(cursor: string): KeysetPosition {
  try {
    if (!/^[A-Za-z0-9_-]{1,512}$/.test(cursor)) throw new Error('not base64url')
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      const time = new Date(value[0])
      if (storable(time) && /^[\w-]{1,64}$/.test(value[1])) return { time, id: value[1] }
    }
  } catch {
    // reported below
  }
  throw invalidParameter('cursor', 'cursor is not a value returned as next_cursor')
}

// Years PostgreSQL timestamps hold and ids of our form only: anything else (a year -271821, an id with a
// NUL byte) is not a position we ever handed out, and would make the query fail with a 500.
const EARLIEST = Date.parse('0001-01-01T00:00:00.000Z')
const LATEST = Date.parse('9999-12-31T23:59:59.999Z')

function storable(time: Date): boolean {
  const ms = time.getTime()
  return ms >= EARLIEST && ms <= LATEST
}
