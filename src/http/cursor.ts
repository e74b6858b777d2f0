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
      if (!Number.isNaN(time.getTime()) && value[1].length <= 64) return { time, id: value[1] }
    }
  } catch {
    // reported below
  }
  throw invalidParameter('cursor', 'cursor is not a value returned as next_cursor')
}
