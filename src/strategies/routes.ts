import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../db/connect.js'
import type { ReadCache } from '../db/read-cache.js'
import type { Access } from '../http/access.js'
import { ErrorEnvelopeSchema, SIGNED_SECURITY as security } from '../http/common-schemas.js'
import {
  StrategyCreateSchema,
  StrategyIdSchema,
  StrategyListQuerySchema,
  StrategyPageSchema,
  StrategyPatchSchema,
  StrategySchema,
} from './schemas.js'
import type { StrategyRow } from './queries.js'
import { createStrategy, deleteStrategy, getStrategy, pageStrategies, patchStrategy, type StrategyContext } from './service.js'

const read = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, scope: 'strategies:read' } })
const write = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, scope: 'strategies:write' } })
const tags = ['strategies']
const errors = { 400: ErrorEnvelopeSchema, 401: ErrorEnvelopeSchema, 403: ErrorEnvelopeSchema, 404: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema }

/** Signed strategy records (spec "Signed strategy record"; create, list, update and delete designed in DESIGN §5). */
export interface StrategyRoutesOptions {
  db: Db
  now: () => number
  cache: ReadCache<StrategyRow | undefined> | undefined
}

export const strategyRoutes: FastifyPluginAsync<StrategyRoutesOptions> = async (fastify, { db, now, cache }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const context = (request: FastifyRequest): StrategyContext => ({ db, userId: request.principal!.userId, now: new Date(now()), cache })

  app.post(
    '/v1/strategies',
    {
      config: write(5),
      schema: { tags, security, summary: 'Create a strategy (status draft)', body: StrategyCreateSchema, response: { 200: StrategySchema, ...errors } },
    },
    async (request) => createStrategy(context(request), request.body),
  )

  app.get(
    '/v1/strategies',
    {
      config: read(5),
      schema: {
        tags,
        security,
        summary: "The caller's strategies, newest first",
        querystring: StrategyListQuerySchema,
        response: { 200: StrategyPageSchema, ...errors },
      },
    },
    async (request) => pageStrategies(context(request), request.query),
  )

  app.get(
    '/v1/strategies/:id',
    { config: read(1), schema: { tags, security, summary: 'One strategy', params: StrategyIdSchema, response: { 200: StrategySchema, ...errors } } },
    async (request) => getStrategy(context(request), request.params.id),
  )

  app.patch(
    '/v1/strategies/:id',
    {
      config: write(5),
      schema: {
        tags,
        security,
        summary: 'Change any of the creatable fields; 409 INVALID_STATE while deployed',
        params: StrategyIdSchema,
        body: StrategyPatchSchema,
        response: { 200: StrategySchema, 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request) => patchStrategy(context(request), request.params.id, request.body),
  )

  app.delete(
    '/v1/strategies/:id',
    {
      config: write(5),
      schema: {
        tags,
        security,
        summary: 'Delete a strategy; 409 INVALID_STATE while deployed',
        params: StrategyIdSchema,
        response: { 204: Type.Null({ description: 'Deleted' }), 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request, reply) => {
      await deleteStrategy(context(request), request.params.id)
      return reply.code(204).send(null)
    },
  )
}
