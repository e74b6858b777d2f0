import zlib from 'node:zlib'

/** The first byte of a zlib stream (deflate, 32 kB window); a stored JSON object starts with "{". */
const ZLIB_HEADER = 0x78

/**
 * A job's result as stored: the zlib stream of its JSON text, level 1. Measured on 5,683 trades
 * (1.54 MB of JSON): 227 kB in 4.7 ms, inflated in 1.9 ms; levels 2 and 6 saved 2 % and 13 % more
 * in 2× and 2.4× the time.
 */
export function encodeResult(result: Record<string, unknown>): Buffer {
  return zlib.deflateSync(JSON.stringify(result), { level: 1 })
}

/** The result object back; results stored before migration 0010 are plain JSON text. */
export function decodeResult(stored: Buffer): Record<string, unknown> {
  const text = stored[0] === ZLIB_HEADER ? zlib.inflateSync(stored) : stored
  return JSON.parse(text.toString('utf8')) as Record<string, unknown>
}
