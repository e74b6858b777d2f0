/** How deep a request body may nest; our deepest schema (a webhook's or a template's fields) needs 3. */
export const MAX_JSON_DEPTH = 32

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const COMMA = 0x2c

/**
 * Reads the JSON text's nesting without parsing it, in one pass over the bytes, and answers the JSON
 * pointer of the top-level member that nests deeper than `max` ('' when the body itself does), or
 * undefined. It runs before JSON.parse, so every later step that recurses (TypeBox's uniqueItems hash
 * overflowed the stack on 10,000 levels of `symbols`) only ever sees shallow values, and a 1 MB body of
 * `[` costs a few milliseconds here instead of 0.7 s of JSON.parse on the event loop (measured).
 * The text may be malformed: the parser that follows reports that.
 */
export function tooDeepMember(raw: Uint8Array, max = MAX_JSON_DEPTH): string | undefined {
  let depth = 0
  let inString = false
  let escaped = false
  let topIsObject = false
  let expectingKey = false
  let keyStart = -1
  let keyEnd = -1
  for (let i = 0; i < raw.length; i++) {
    const byte = raw[i]
    if (inString) {
      if (escaped) escaped = false
      else if (byte === BACKSLASH) escaped = true
      else if (byte === QUOTE) {
        inString = false
        if (keyStart >= 0 && keyEnd < keyStart) keyEnd = i
      }
      continue
    }
    switch (byte) {
      case QUOTE:
        inString = true
        if (depth === 1 && expectingKey) {
          keyStart = i
          expectingKey = false
        }
        break
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        depth++
        if (depth === 1) {
          topIsObject = byte === OPEN_OBJECT
          expectingKey = topIsObject
        }
        if (depth > max) return topIsObject ? pointerOf(raw, keyStart, keyEnd) : ''
        break
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        depth--
        break
      case COMMA:
        if (depth === 1 && topIsObject) expectingKey = true
        break
    }
  }
  return undefined
}

function pointerOf(raw: Uint8Array, start: number, end: number): string {
  if (start < 0 || end < start) return ''
  try {
    const key = JSON.parse(Buffer.from(raw.subarray(start, end + 1)).toString('utf8')) as string
    return `/${pointerSegment(key)}`
  } catch {
    return ''
  }
}

/** A key as one segment of a JSON pointer (RFC 6901). */
export function pointerSegment(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1')
}
