import { invalidParameter } from '../http/errors.js'
import { TIMEFRAME_MS } from '../strategies/schemas.js'

/** A strategy's timeframe in milliseconds (400 for one a run cannot follow). */
export function intervalMs(timeframe: string): number {
  const ms = (TIMEFRAME_MS as Record<string, number>)[timeframe]
  if (ms === undefined) throw invalidParameter('timeframe', `a run cannot follow timeframe ${timeframe}`)
  return ms
}
