import { Type } from 'typebox'

/** A positive or zero decimal carried as a string (decimals never travel as JSON numbers). */
export const DecimalString = (description: string) =>
  Type.String({ pattern: '^(0|[1-9][0-9]{0,17})(\\.[0-9]{1,18})?$', description, examples: ['1000.50'] })

export const IsoTimestamp = Type.String({ format: 'date-time', description: 'ISO 8601 UTC with milliseconds', examples: ['2026-11-22T08:30:00.000Z'] })

export const ErrorEnvelopeSchema = Type.Object({
  error: Type.Object({
    code: Type.String({ examples: ['INVALID_PARAMETER'] }),
    message: Type.String(),
    request_id: Type.String(),
    field: Type.Optional(Type.String()),
  }),
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
