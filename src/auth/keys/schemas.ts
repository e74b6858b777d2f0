import { type Static, Type } from 'typebox'
import { IsoTimestamp } from '../../http/common-schemas.js'
import { SCOPES } from '../scopes.js'

export const API_KEY_NAME_MAX = 100
/** API keys one user may hold at a time (revoked ones do not count). */
export const MAX_API_KEYS = 20

export const API_KEY_ID_PATTERN = '^pk_[0-9a-f]{24}$'

export const ApiKeyCreateSchema = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: API_KEY_NAME_MAX, description: `1 to ${API_KEY_NAME_MAX} characters` }),
    scopes: Type.Array(Type.String({ maxLength: 64 }), {
      minItems: 1,
      maxItems: SCOPES.length,
      description: `Scopes the key carries, at least one of: ${SCOPES.join(', ')}`,
    }),
  },
  { additionalProperties: false },
)
export type ApiKeyCreate = Static<typeof ApiKeyCreateSchema>

export const ApiKeyIdSchema = Type.Object({
  id: Type.String({ pattern: API_KEY_ID_PATTERN, description: 'An API key id: pk_ + 24 hex digits' }),
})

const keyFields = {
  id: Type.String({ description: 'The API key (X-Service-API-Key): pk_ + 24 hex digits' }),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  created_at: IsoTimestamp,
  last_rotated_at: Type.Union([IsoTimestamp, Type.Null()], { description: 'When the secret was last replaced; null if never' }),
}

export const ApiKeySchema = Type.Object(keyFields)
export type ApiKey = Static<typeof ApiKeySchema>

export const SECRET_WARNING = 'Store this secret now: it is shown only in this response and cannot be retrieved later.'

export const ApiKeyWithSecretSchema = Type.Object({
  ...keyFields,
  secret: Type.String({ description: 'The API secret that signs requests; returned only by create and rotate' }),
  _secret_warning: Type.String(),
})
export type ApiKeyWithSecret = Static<typeof ApiKeyWithSecretSchema>

export const ApiKeyListSchema = Type.Object({ data: Type.Array(ApiKeySchema, { description: 'Active keys, newest first; never a secret' }) })
