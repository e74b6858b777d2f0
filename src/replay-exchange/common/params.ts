import { BinanceError, illegalCharacters, invalidData, mandatory, startAfterEnd } from './errors.js'

/** Query parameters as Binance reads them: names are case-sensitive, repeated names are malformed. */
export type Query = Record<string, string | string[] | undefined>

export function text(query: Query, name: string): string | undefined {
  const value = query[name]
  if (Array.isArray(value)) throw mandatory(name)
  return value === undefined || value === '' ? undefined : value
}

export function required(query: Query, name: string): string {
  const value = text(query, name)
  if (value === undefined) throw mandatory(name)
  return value
}

export function integer(query: Query, name: string): number | undefined {
  const value = text(query, name)
  if (value === undefined) return undefined
  if (!/^-?\d{1,20}$/.test(value)) throw illegalCharacters(name)
  return Number(value)
}

/** `limit` within [1, max], default `fallback`; out of range is -1130 as on Binance. */
export function limit(query: Query, fallback: number, max: number): number {
  const value = integer(query, 'limit')
  if (value === undefined) return fallback
  if (value < 1 || value > max) throw invalidData('limit')
  return value
}

export interface TimeRange {
  startTime: number | undefined
  endTime: number | undefined
}

export function timeRange(query: Query): TimeRange {
  const startTime = integer(query, 'startTime')
  const endTime = integer(query, 'endTime')
  if (startTime !== undefined && endTime !== undefined && startTime > endTime) throw startAfterEnd()
  return { startTime, endTime }
}

export { BinanceError }
