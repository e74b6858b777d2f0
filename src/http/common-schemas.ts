import { Type } from 'typebox'
import { ERROR_STATUS, type ErrorCode } from './errors.js'

/** A positive or zero decimal carried as a string (decimals never travel as JSON numbers). */
export const DecimalString = (description: string) =>
  Type.String({ pattern: '^(0|[1-9][0-9]{0,17})(\\.[0-9]{1,18})?$', description, examples: ['1000.50'] })

export const IsoTimestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds', examples: ['2026-11-22T08:30:00.000Z'] })

/** The body of every /v1 error (DESIGN §5); `code` is one of the closed set in errors.ts. */
export const ErrorEnvelopeSchema = Type.Object(
  {
    error: Type.Object({
      code: Type.Unsafe<ErrorCode>({ type: 'string', enum: Object.keys(ERROR_STATUS), example: 'INVALID_PARAMETER' }),
      message: Type.String({ description: 'What is wrong, for a person' }),
      request_id: Type.String({ description: 'Echoed in x-request-id; quote it when reporting a problem' }),
      field: Type.Optional(Type.String({ description: 'The request field at fault, e.g. "limit" or "params.fast"' })),
    }),
  },
  { title: 'ErrorEnvelope' },
)

/** The body of a public (FastAPI-style) error: 400, 404, 413, 415, 429, 502. */
export const DetailSchema = Type.Object({ detail: Type.String() })

/** The body of a public 422 (FastAPI's validation list). */
export const ValidationErrorSchema = Type.Object({
  detail: Type.Array(
    Type.Object({
      type: Type.String(),
      loc: Type.Array(Type.Union([Type.String(), Type.Integer()])),
      msg: Type.String(),
    }),
  ),
})

export const PageLimit = (max: number, fallback: number) =>
  Type.Optional(Type.Integer({ minimum: 1, maximum: max, default: fallback, description: `1 to ${max}, default ${fallback}` }))

export const Cursor = Type.Optional(Type.String({ maxLength: 512, description: 'Opaque value from a previous next_cursor' }))

/** True for a decimal string strictly above zero. */
export function isPositiveDecimal(value: string): boolean {
  return /[1-9]/.test(value)
}

/** OpenAPI security of signed /v1 routes: the three signing headers together, or a Bearer app token. */
export const SIGNED_SECURITY: Record<string, string[]>[] = [{ apiKey: [], timestamp: [], signature: [] }, { bearer: [] }]
