import { Readable } from 'node:stream'
import { setImmediate as nextTurn } from 'node:timers/promises'

/**
 * A body written a piece at a time as the client reads it, the event loop free between pieces.
 * Backpressure alone does not free it: a loopback socket takes megabytes before it pushes back, and a
 * write that completes at once wakes the stream again from the same tick, so the pieces of ten answers
 * ran back to back for 100–380 ms with no request served meanwhile (issue 37, measured). Each piece waits
 * for the loop's next turn, after the I/O that came in during the last.
 */
export function pacedStream(pieces: Iterable<string>, highWaterMark = 64 * 1024): Readable {
  async function* paced() {
    for (const piece of pieces) {
      yield piece
      await nextTurn()
    }
  }
  return Readable.from(paced(), { objectMode: false, highWaterMark })
}
