import { type Static, Type } from 'typebox'
import { IsoTimestamp } from '../http/common-schemas.js'

/** Exchange keys one user may register. */
export const MAX_EXCHANGE_KEYS = 10
export const EXCHANGE_KEY_ID_PATTERN = '^xk_[0-9a-f]{8}$'

// Binance keys and secrets are 64 alphanumerics; the limits leave room for other key formats while
// keeping header-unsafe characters (CR, LF, spaces, non-ASCII) out of the X-MBX-APIKEY header.
const API_KEY_EXAMPLE = 'vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco5ClKNuObs'

export const ExchangeKeyCreateSchema = Type.Object(
  {
    api_key: Type.String({
      pattern: '^[A-Za-z0-9_-]{16,128}$',
      description: 'The exchange API key: 16 to 128 letters, digits, _ or -',
      example: API_KEY_EXAMPLE,
    }),
    api_secret: Type.String({
      pattern: '^[\\x21-\\x7e]{16,256}$',
      description: 'The exchange API secret: 16 to 256 printable ASCII characters; stored encrypted, never returned',
      example: 'NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j',
    }),
    label: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'A name for the key, 1 to 100 characters' })),
  },
  { additionalProperties: false },
)
export type ExchangeKeyCreate = Static<typeof ExchangeKeyCreateSchema>

export const ExchangeKeyIdSchema = Type.Object({
  id: Type.String({ pattern: EXCHANGE_KEY_ID_PATTERN, description: 'An exchange key id: xk_ + 8 hex digits' }),
})

export const VERIFICATION_STATUSES = ['pending', 'verified', 'failed'] as const

export const ExchangeKeySchema = Type.Object({
  id: Type.String({ description: 'xk_ + 8 hex digits' }),
  label: Type.Union([Type.String(), Type.Null()]),
  api_key: Type.String({ description: 'Masked: the first 4 and last 4 characters', examples: ['vmPU…uObs'] }),
  verification_status: Type.Enum(VERIFICATION_STATUSES, {
    description:
      'verified: the exchange accepted a signed account request. failed: the exchange refused the key or its ' +
      'signature (verification_error says why). pending: the exchange gave no verdict (unreachable, rate limited).',
  }),
  last_verified: Type.Union([IsoTimestamp, Type.Null()], { description: 'When the exchange last answered a check (verified or failed)' }),
  verification_error: Type.Union([
    Type.Object({ code: Type.Union([Type.Integer(), Type.Null()], { description: "The exchange's error code, e.g. -2015" }), message: Type.String() }),
    Type.Null(),
  ]),
  created_at: IsoTimestamp,
})
export type ExchangeKey = Static<typeof ExchangeKeySchema>

export const ExchangeKeyListSchema = Type.Object({ data: Type.Array(ExchangeKeySchema, { description: 'Newest first; never a secret' }) })

// Public lookup by email (spec "Sign-in and key endpoints"): exactly the spec's fields.

const Email = Type.String({
  maxLength: 254,
  pattern: '^[^\\s@\\x00-\\x1f]{1,64}@[^\\s@\\x00-\\x1f]+\\.[^\\s@\\x00-\\x1f]+$',
  description: 'The account email',
  example: 'trader@example.com',
})

export const KeyVerifyBodySchema = Type.Object({ email: Email }, { additionalProperties: false })
export const KeyStatusParamsSchema = Type.Object({ email: Email })

export const KeyVerifyResultSchema = Type.Object({
  success: Type.Boolean({ description: 'true when the exchange accepted the registered key just now' }),
  message: Type.String(),
  email: Type.String(),
  has_api_key: Type.Boolean(),
})
export type KeyVerifyResult = Static<typeof KeyVerifyResultSchema>

const NaiveTime = Type.String({ description: 'ISO 8601 UTC without zone suffix', examples: ['2026-11-22T08:30:00.123000'] })

export const KeyStatusSchema = Type.Object({
  success: Type.Boolean(),
  message: Type.String(),
  email: Type.String(),
  has_api_key: Type.Boolean(),
  verification_status: Type.Optional(Type.Enum(VERIFICATION_STATUSES)),
  last_verified: Type.Optional(Type.Union([NaiveTime, Type.Null()])),
  created_at: Type.Optional(NaiveTime),
  is_active: Type.Optional(Type.Boolean({ description: 'false once the exchange refused the key' })),
})
export type KeyStatus = Static<typeof KeyStatusSchema>
