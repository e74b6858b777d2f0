import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { NoQuerySchema } from '../backtests/schemas.js'
import { BEARER_SECURITY as security } from '../auth/keys/routes.js'
import { signedInUser } from '../auth/keys/signed-in.js'
import type { Access } from '../http/access.js'
import { ErrorEnvelopeSchema } from '../http/common-schemas.js'
import { chargeWeight } from '../http/rate-limit.js'
import { DetailSchema, ValidationErrorSchema } from '../strategies/public-schemas.js'
import {
  ExchangeKeyCreateSchema,
  ExchangeKeyIdSchema,
  ExchangeKeyListSchema,
  ExchangeKeySchema,
  KeyStatusParamsSchema,
  KeyStatusSchema,
  KeyVerifyBodySchema,
  KeyVerifyResultSchema,
} from './schemas.js'
import { type ExchangeKeyDeps, listKeys, registerKey, removeKey, reverifyKey, statusByEmail, verifyByEmail } from './service.js'

/**
 * Email lookups per IP per minute, on top of the public per-IP budget: the two lookups are
 * unauthenticated and answer per email, so a tight budget slows anyone walking a list of addresses
 * (a user checking their own key needs a handful).
 */
export const KEY_LOOKUPS_PER_MINUTE = 30

const v1 = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, bearerOnly: true } })
const tags = ['exchange keys']
const errors = { 400: ErrorEnvelopeSchema, 401: ErrorEnvelopeSchema, 403: ErrorEnvelopeSchema, 404: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema }
const BEARER_ONLY = 'Needs a signed-in user (Authorization: Bearer <app token>); a signed API key is refused with 403 INSUFFICIENT_PERMISSION.'
const VERIFIED_HOW =
  'The key is checked with one SIGNED request to the exchange (GET /fapi/v2/account, HMAC-SHA256 of the query ' +
  'string, recvWindow 5000) at most once a minute.'

/** Registered exchange keys (signed-in user) and the spec's public email lookups of them. */
export const exchangeKeyRoutes: FastifyPluginAsync<ExchangeKeyDeps> = async (fastify, deps) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const user = (request: FastifyRequest) => signedInUser(request.principal)

  app.post(
    '/v1/exchange-keys',
    {
      config: v1(10),
      schema: {
        tags,
        security,
        summary: 'Register a Binance USD-M key pair (stored encrypted) and verify it with the exchange',
        description:
          `${BEARER_ONLY} ${VERIFIED_HOW} The key is stored whatever the outcome: verification_status says whether the ` +
          'exchange accepted it (verified), refused it (failed, with its error) or could not be asked (pending).',
        body: ExchangeKeyCreateSchema,
        response: { 200: ExchangeKeySchema, 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request) => registerKey(deps, user(request), request.body),
  )

  app.get(
    '/v1/exchange-keys',
    {
      config: v1(2),
      schema: {
        tags,
        security,
        summary: 'The signed-in user’s exchange keys, masked (never a secret)',
        description: BEARER_ONLY,
        querystring: NoQuerySchema,
        response: { 200: ExchangeKeyListSchema, ...errors },
      },
    },
    async (request) => listKeys(deps, user(request)),
  )

  app.post(
    '/v1/exchange-keys/:id/verify',
    {
      config: v1(10),
      schema: {
        tags,
        security,
        summary: 'Check the key with the exchange again',
        description: `${BEARER_ONLY} ${VERIFIED_HOW} Within the minute the recorded state is returned unchanged.`,
        params: ExchangeKeyIdSchema,
        response: { 200: ExchangeKeySchema, ...errors },
      },
    },
    async (request) => reverifyKey(deps, user(request), request.params.id),
  )

  app.delete(
    '/v1/exchange-keys/:id',
    {
      config: v1(5),
      schema: {
        tags,
        security,
        summary: 'Delete the key and its encrypted secret',
        description: BEARER_ONLY,
        params: ExchangeKeyIdSchema,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors },
      },
    },
    async (request, reply) => {
      await removeKey(deps, user(request), request.params.id)
      return reply.code(204).send(null)
    },
  )

  const lookup = { access: { kind: 'public' as const } }
  const lookupTags = ['sign-in and keys']
  const limitLookups = (request: FastifyRequest, reply: FastifyReply) =>
    chargeWeight(reply, { limit: KEY_LOOKUPS_PER_MINUTE, shared: deps.shared, now: deps.now }, `key-lookup:${request.ip}`, 1, false)
  const lookupNote =
    `Unauthenticated, as the spec has it; limited to ${KEY_LOOKUPS_PER_MINUTE} lookups per IP per minute. ` +
    'An unknown email and an email without a registered key get the same answer.'

  app.post(
    '/api-key/verify',
    {
      config: lookup,
      schema: {
        tags: lookupTags,
        summary: "Re-check the email's registered exchange key with the exchange",
        description: `${lookupNote} ${VERIFIED_HOW}`,
        body: KeyVerifyBodySchema,
        response: { 200: KeyVerifyResultSchema, 422: ValidationErrorSchema, 429: DetailSchema },
      },
    },
    async (request, reply) => {
      await limitLookups(request, reply)
      return verifyByEmail(deps, request.body.email)
    },
  )

  app.get(
    '/api-key/status/:email',
    {
      config: lookup,
      schema: {
        tags: lookupTags,
        summary: "The email's registered exchange key: verification status, last check, creation, active",
        description: lookupNote,
        params: KeyStatusParamsSchema,
        response: { 200: KeyStatusSchema, 422: ValidationErrorSchema, 429: DetailSchema },
      },
    },
    async (request, reply) => {
      await limitLookups(request, reply)
      return statusByEmail(deps, request.params.email)
    },
  )
}
