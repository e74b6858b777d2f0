import { type Static, Type } from 'typebox'

const OptionalText = Type.Optional(Type.Union([Type.String({ maxLength: 10_000 }), Type.Null()]))

export const PublicStrategyCreateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: 'Unique across the platform; cannot be changed later.' }),
    author: OptionalText,
    description: OptionalText,
    entry_condition: OptionalText,
    exit_condition: OptionalText,
    bot_name: OptionalText,
  },
  { additionalProperties: false },
)
export type PublicStrategyCreate = Static<typeof PublicStrategyCreateSchema>

export const PublicStrategyUpdateSchema = Type.Object(
  {
    // A client that reads a record, edits it and writes it back sends the read-only fields too: they
    // are accepted and ignored, as the original service did (issue 12), while unknown fields stay refused.
    name: Type.Optional(Type.String({ description: 'Ignored: a name cannot be changed (the record keeps its own).' })),
    id: Type.Optional(Type.Integer({ minimum: 1, maximum: 2147483647, description: 'Ignored (read-only); the path names the record.' })),
    created_at: Type.Optional(Type.String({ description: 'Ignored (read-only).' })),
    updated_at: Type.Optional(Type.String({ description: 'Ignored (read-only); refreshed by the update.' })),
    author: OptionalText,
    description: OptionalText,
    entry_condition: OptionalText,
    exit_condition: OptionalText,
    bot_name: OptionalText,
  },
  { additionalProperties: false, description: 'Omitted and null fields stay unchanged; the record as read (name, id, timestamps) may be sent back whole.' },
)
export type PublicStrategyUpdate = Static<typeof PublicStrategyUpdateSchema>

const NullableText = Type.Union([Type.String(), Type.Null()])
const NaiveTimestamp = Type.String({ description: 'ISO 8601, UTC, without zone suffix', examples: ['2026-11-22T08:30:00.123456'] })

export const PublicStrategySchema = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  author: NullableText,
  description: NullableText,
  entry_condition: NullableText,
  exit_condition: NullableText,
  bot_name: NullableText,
  created_at: NaiveTimestamp,
  updated_at: NaiveTimestamp,
})
export type PublicStrategy = Static<typeof PublicStrategySchema>

export const PublicStrategyIdSchema = Type.Object({ strategy_id: Type.Integer() })

export { DetailSchema, ValidationErrorSchema } from '../http/common-schemas.js'
