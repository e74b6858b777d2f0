import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { Config } from '../../config.js'
import { DetailSchema, ValidationErrorSchema } from '../../strategies/public-schemas.js'
import { IdentityProvider } from './provider.js'
import { IdpaSignInSchema, IdpbSignInSchema, SignInResponseSchema } from './schemas.js'
import { type SignInDeps, signIn } from './service.js'

export interface IdentityRoutesOptions extends SignInDeps {
  providers: Pick<Config, 'idpa' | 'idpb'>
}

/**
 * POST /auth/mobile/idpa and /auth/mobile/idpb (spec "Sign-in and key endpoints"): public, unsigned,
 * FastAPI-shaped errors (401 and 503 as {"detail": …}, 422 lists). Each provider keeps its key set
 * cached for the life of the app.
 */
export const identityRoutes: FastifyPluginAsync<IdentityRoutesOptions> = async (fastify, { providers, ...deps }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const idpa = new IdentityProvider('idpa', providers.idpa, { emailAlways: true }, deps.now)
  const idpb = new IdentityProvider('idpb', providers.idpb, { emailAlways: false }, deps.now)
  const config = { access: { kind: 'public' as const } }
  const tags = ['sign-in']
  const response = { 200: SignInResponseSchema, 401: DetailSchema, 422: ValidationErrorSchema, 503: DetailSchema }

  app.post(
    '/auth/mobile/idpa',
    {
      config,
      schema: {
        tags,
        summary: 'Exchange a first-provider ID token for an app token',
        description:
          'Verifies the RS256 signature against the provider’s keys, the issuer, the audience (our client ids), exp/iat/nbf ' +
          '(60 s of skew) and a verified email; then signs in the user linked to the token’s subject, else the user with that ' +
          'email (linking the subject), else a new user. 401 for an invalid, expired or unverified token; 503 when the ' +
          'provider’s keys cannot be fetched.',
        body: IdpaSignInSchema,
        response,
      },
    },
    async (request) => signIn(deps, idpa, request.body.id_token),
  )

  app.post(
    '/auth/mobile/idpb',
    {
      config,
      schema: {
        tags,
        summary: 'Exchange a second-provider identity token for an app token',
        description:
          'The same flow as /auth/mobile/idpa. The second provider sends the email only in a user’s first token, so later ' +
          'sign-ins are matched by subject; email_verified may be the string "true"; private relay addresses are ordinary emails.',
        body: IdpbSignInSchema,
        response,
      },
    },
    async (request) => signIn(deps, idpb, request.body.identity_token),
  )
}
