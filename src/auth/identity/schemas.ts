import { type Static, Type } from 'typebox'

/**
 * A compact JWT: base64url segments and dots. Anything else (NUL, spaces, an empty string) is refused as
 * 422 before the provider is consulted, so a malformed request is a 422 even where the provider is not
 * configured (503); a non-empty string of the right alphabet that is not a valid token is a 401.
 */
const TokenString = (description: string) => Type.String({ minLength: 1, maxLength: 16_384, pattern: '^[A-Za-z0-9._-]*$', description })

export const IdpaSignInSchema = Type.Object(
  { id_token: TokenString('The ID token (RS256 JWT) the first identity provider gave the app') },
  { additionalProperties: false },
)
export type IdpaSignIn = Static<typeof IdpaSignInSchema>

export const IdpbSignInSchema = Type.Object(
  { identity_token: TokenString('The identity token (RS256 JWT) the second identity provider gave the app') },
  { additionalProperties: false },
)
export type IdpbSignIn = Static<typeof IdpbSignInSchema>

const NaiveTimestamp = (description: string) => Type.String({ description, examples: ['2026-11-22T08:30:00.123456'] })

/** The spec's "App-token user object". */
export const UserObjectSchema = Type.Object({
  id: Type.Integer(),
  email: Type.String(),
  name: Type.String(),
  idpa_id: Type.Union([Type.String(), Type.Null()], { description: 'Subject at the first identity provider, once linked' }),
  idpb_id: Type.Union([Type.String(), Type.Null()], { description: 'Subject at the second identity provider, once linked' }),
  is_vip: Type.Boolean({ description: 'true while a Standard or Pro plan is active' }),
  vip_expires_at: Type.Union([NaiveTimestamp('End of the plan, ISO 8601 UTC without zone'), Type.Null()], {
    description: 'null when the plan has no end date',
  }),
  created_at: NaiveTimestamp('ISO 8601 UTC without zone'),
  updated_at: NaiveTimestamp('ISO 8601 UTC without zone'),
})
export type UserObject = Static<typeof UserObjectSchema>

export const SignInResponseSchema = Type.Object({
  access_token: Type.String({ description: 'HS256 app token for Authorization: Bearer on /v1; lifetime APP_JWT_TTL' }),
  user: UserObjectSchema,
})
export type SignInResponse = Static<typeof SignInResponseSchema>
