import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import { NoQuerySchema } from '../../backtests/schemas.js'
import type { Db } from '../../db/connect.js'
import type { Access } from '../../http/access.js'
import { ErrorEnvelopeSchema } from '../../http/common-schemas.js'
import type { KeyDirectory } from '../key-directory.js'
import type { SecretBox } from '../secret-box.js'
import { ApiKeyCreateSchema, ApiKeyIdSchema, ApiKeyListSchema, ApiKeyWithSecretSchema } from './schemas.js'
import { type ApiKeyContext, createKey, deleteKey, listKeys, rotateKey } from './service.js'
import { signedInUser } from './signed-in.js'

export interface ApiKeyRoutesOptions {
  db: Db
  box: SecretBox
  keys: KeyDirectory
  now: () => number
}

const access = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, bearerOnly: true } })
const tags = ['API keys']
/** Bearer app token only (see signed-in.ts). */
export const BEARER_SECURITY: Record<string, string[]>[] = [{ bearer: [] }]
const security = BEARER_SECURITY
const errors = { 400: ErrorEnvelopeSchema, 401: ErrorEnvelopeSchema, 403: ErrorEnvelopeSchema, 404: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema }
const BEARER_ONLY = 'Needs a signed-in user (Authorization: Bearer <app token>); a signed API key is refused with 403 INSUFFICIENT_PERMISSION.'

/** The signed-in user's API keys: create (secret shown once), list, rotate, revoke. */
export const apiKeyRoutes: FastifyPluginAsync<ApiKeyRoutesOptions> = async (fastify, options) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const context = (request: FastifyRequest): ApiKeyContext => ({
    db: options.db,
    box: options.box,
    keys: options.keys,
    userId: signedInUser(request.principal),
    now: new Date(options.now()),
  })

  app.post(
    '/v1/api-keys',
    {
      config: access(5),
      schema: {
        tags,
        security,
        summary: 'Create an API key; its secret is in this response only',
        description: BEARER_ONLY,
        body: ApiKeyCreateSchema,
        response: { 200: ApiKeyWithSecretSchema, ...errors },
      },
    },
    async (request) => createKey(context(request), request.body),
  )

  app.get(
    '/v1/api-keys',
    {
      config: access(2),
      schema: {
        tags,
        security,
        summary: "The signed-in user's active API keys (never a secret)",
        description: BEARER_ONLY,
        querystring: NoQuerySchema,
        response: { 200: ApiKeyListSchema, ...errors },
      },
    },
    async (request) => listKeys(context(request)),
  )

  app.post(
    '/v1/api-keys/:id/rotate',
    {
      config: access(5),
      schema: {
        tags,
        security,
        summary: 'Replace the secret; the old one is refused from the next request on',
        description: `${BEARER_ONLY} Emits account.api_key_rotated (data: key_id, name, rotated_at).`,
        params: ApiKeyIdSchema,
        response: { 200: ApiKeyWithSecretSchema, ...errors },
      },
    },
    async (request) => rotateKey(context(request), request.params.id),
  )

  app.delete(
    '/v1/api-keys/:id',
    {
      config: access(5),
      schema: {
        tags,
        security,
        summary: 'Revoke the key; refused from the next request on',
        description: BEARER_ONLY,
        params: ApiKeyIdSchema,
        response: { 204: Type.Null({ description: 'Revoked' }), ...errors },
      },
    },
    async (request, reply) => {
      await deleteKey(context(request), request.params.id)
      return reply.code(204).send(null)
    },
  )
}
