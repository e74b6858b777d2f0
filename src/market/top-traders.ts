/** Helpers shared by the smart-money overview, the smart-money list and the whale board. */

/** Every 5m series is fetched with this many points (the last hour and the point before it), so all users of a series share one cache entry. */
export const FIVE_MINUTE_POINTS = 13

/** longPosition − shortPosition of one top-trader point: the net position share, in [−1, 1]. */
export function netOf(point: { longPosition: string; shortPosition: string }): number {
  return Number(point.longPosition) - Number(point.shortPosition)
}

/**
 * A supporting series the exchange refused (no data for the symbol) is left out rather than failing
 * the whole answer; a series that could not be fetched at all has already failed it (502).
 */
export function optional<T>(read: () => T): T | undefined {
  try {
    return read()
  } catch {
    return undefined
  }
}
