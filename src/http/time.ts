import { invalidParameter } from './errors.js'

// Date only, or date and time with optional seconds and fraction, then Z, an offset, or nothing (read as UTC).
const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?)?$/

/** Parses an ISO 8601 time (UTC unless an offset is given) into Unix ms; 400 INVALID_PARAMETER naming `field` otherwise. */
export function parseUtcTime(value: string, field: string): number {
  const match = ISO_8601.exec(value.trim())
  if (!match) throw invalidParameter(field, `${field} must be an ISO 8601 UTC time such as 2024-01-01T00:00:00Z`)
  const [, y, mo, d, h = '00', mi = '00', s = '00', fraction = '', zone = 'Z'] = match
  const offset = zone === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone
  const ms = Date.parse(`${y}-${mo}-${d}T${h}:${mi}:${s}${fraction.slice(0, 4)}${offset}`)
  // Date.parse rolls 2024-02-30 over to March; a round trip of the date part catches it.
  const valid = !Number.isNaN(ms) && new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d))).toISOString().startsWith(`${y}-${mo}-${d}`)
  if (!valid) throw invalidParameter(field, `${field} is not a real date and time: ${value}`)
  return ms
}
