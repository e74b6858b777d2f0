import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../db/connect.js'
import {
  DetailSchema,
  PublicStrategyCreateSchema,
  PublicStrategyIdSchema,
  PublicStrategySchema,
  PublicStrategyUpdateSchema,
  ValidationErrorSchema,
} from './public-schemas.js'
import { changePublicStrategy, createPublicStrategy, getPublicStrategy } from './public-service.js'
import { listPublicStrategies } from './public-queries.js'

/** The public, unauthenticated strategy metadata CRUD (spec "Public strategy CRUD"); no delete by design. */
export const publicStrategyRoutes: FastifyPluginAsync<{ db: Db }> = async (fastify, { db }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const config = { access: { kind: 'public' as const } }
  const tags = ['strategies (public)']
  const errors = { 404: DetailSchema, 422: ValidationErrorSchema }

  app.post(
    '/strategies',
    {
      config,
      schema: {
        tags,
        summary: 'Create a strategy record (metadata only)',
        body: PublicStrategyCreateSchema,
        response: { 200: PublicStrategySchema, 400: DetailSchema, 422: ValidationErrorSchema },
      },
    },
    async (request) => createPublicStrategy(db, request.body),
  )

  app.get(
    '/strategies',
    { config, schema: { tags, summary: 'All strategy records, newest first', response: { 200: Type.Array(PublicStrategySchema) } } },
    async () => listPublicStrategies(db),
  )

  app.get(
    '/strategies/:strategy_id',
    { config, schema: { tags, summary: 'One strategy record', params: PublicStrategyIdSchema, response: { 200: PublicStrategySchema, ...errors } } },
    async (request) => getPublicStrategy(db, request.params.strategy_id),
  )

  app.put(
    '/strategies/:strategy_id',
    {
      config,
      schema: {
        tags,
        summary: 'Update a strategy record; omitted and null fields stay unchanged; name, id and timestamps in the body are ignored (the name never changes)',
        params: PublicStrategyIdSchema,
        body: PublicStrategyUpdateSchema,
        response: { 200: PublicStrategySchema, ...errors },
      },
    },
    async (request) => changePublicStrategy(db, request.params.strategy_id, request.body),
  )
}
