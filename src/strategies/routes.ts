import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { TemplateCatalog } from '../custom-templates/template-catalog.js'
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../db/connect.js'
import type { ReadCache } from '../db/read-cache.js'
import type { Access, Principal } from '../http/access.js'
import { ErrorEnvelopeSchema, SIGNED_SECURITY as security } from '../http/common-schemas.js'
import { type DeployContext, deployStrategy, pauseStrategy } from '../live/deploy.js'
import {
  DeployBodySchema,
  PauseBodySchema,
  StrategyCreateSchema,
  StrategyIdSchema,
  StrategyListQuerySchema,
  StrategyPageSchema,
  StrategyPatchSchema,
  StrategySchema,
} from './schemas.js'
import type { StrategyReads } from './batched-reads.js'
import type { StrategyRow } from './queries.js'
import type { Soon } from '../http/soon.js'
import {
  createStrategy,
  deleteStrategy,
  forgetStrategy,
  getStrategy,
  pageStrategies,
  patchStrategy,
  presentStrategy,
  readStrategy,
  type StrategyContext,
} from './service.js'

const read = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, scope: 'strategies:read' } })
const write = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, scope: 'strategies:write' } })
const tags = ['strategies']
/** What Fastify sets for a serialized JSON body; a pre-serialized one is sent with the same type. */
const JSON_TYPE = 'application/json; charset=utf-8'
const errors = { 400: ErrorEnvelopeSchema, 401: ErrorEnvelopeSchema, 403: ErrorEnvelopeSchema, 404: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema }

/** Signed strategy records (spec "Signed strategy record"; create, list, update and delete designed in DESIGN §5). */
export interface StrategyRoutesOptions {
  db: Db
  now: () => number
  cache: ReadCache<StrategyRow | undefined> | undefined
  reads?: StrategyReads | undefined
  templates: TemplateCatalog
  /** What deploy and pause need beyond the database (src/live/deploy.ts). */
  live: Omit<DeployContext, 'db' | 'userId' | 'now'>
}

export const strategyRoutes: FastifyPluginAsync<StrategyRoutesOptions> = async (fastify, { db, now, cache, reads, templates, live }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const context = (request: FastifyRequest): StrategyContext => ({ db, userId: request.principal!.userId, now: new Date(now()), cache, reads, templates, tradable: live.tradable })

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

  // The read starts as soon as the caller is known, beside the admission (app.ts, onAuthenticated):
  // on PostgreSQL the request then waits for one round trip, not two in a row. It starts after the
  // request arrived, so the caller still reads its own writes; the handler, which alone sends it,
  // runs only once the admission succeeded.
  const early = new WeakMap<FastifyRequest, Soon<StrategyRow | undefined>>()
  const bodies = new WeakMap<StrategyRow, string>()
  const readEarly = (request: FastifyRequest, principal: Principal) => {
    const id = (request.params as { id?: unknown }).id
    if (typeof id !== 'string') return
    const row = readStrategy({ db, userId: principal.userId, now: new Date(now()), cache, reads, templates, tradable: live.tradable }, id)
    if (row instanceof Promise) row.catch(() => undefined) // a refused request never awaits it; the handler sees the failure otherwise
    early.set(request, row) // a cached row is here already (http/soon.ts)
  }
  app.get(
    '/v1/strategies/:id',
    {
      config: { ...read(1), onAuthenticated: readEarly },
      schema: { tags, security, summary: 'One strategy', params: StrategyIdSchema, response: { 200: StrategySchema, ...errors } },
    },
    async (request, reply) => {
      const { id } = request.params
      const read = early.has(request) ? early.get(request) : readStrategy(context(request), id)
      const row = read instanceof Promise ? await read : read
      if (!cache || !row) return presentStrategy(row, id)
      // With the cache (embedded) a hit is the very row object cached, so its body is serialized once per
      // entry instead of per request (toStrategy and the serializer: ~4 µs of a ~70 µs signed GET).
      let body = bodies.get(row)
      if (body === undefined) bodies.set(row, (body = reply.serialize(presentStrategy(row, id)) as string))
      return (reply as FastifyReply).type(JSON_TYPE).send(body) // the schema's type is that of the object, not its JSON
    },
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

  const deployContext = (request: FastifyRequest): DeployContext => ({ ...live, db, userId: request.principal!.userId, now: new Date(now()) })

  app.post(
    '/v1/strategies/:id/deploy',
    {
      config: write(10),
      schema: {
        tags,
        security,
        summary: 'Deploy (or resume) a draft or paused strategy; capital, leverage and dry_run override this run only',
        description:
          'A dry run trades the user\'s paper wallet (10,000 USDT unless set with `perpetua users set-paper-balance`) on live market data, ' +
          'with the backtest engine\'s own fills (next bar\'s open, taker fee of Binance VIP 0), funding and liquidation. ' +
          '402 INSUFFICIENT_FUNDS when the wallet (or the exchange account for a live run) less the capital of the user\'s other deployed runs is below the capital.',
        params: StrategyIdSchema,
        body: Type.Optional(DeployBodySchema),
        response: { 200: StrategySchema, 402: ErrorEnvelopeSchema, 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request) => {
      const userId = request.principal!.userId
      try {
        await deployStrategy(deployContext(request), request.params.id, request.body ?? {})
      } finally {
        forgetStrategy(cache, userId, request.params.id)
      }
      return getStrategy(context(request), request.params.id)
    },
  )

  app.post(
    '/v1/strategies/:id/pause',
    {
      config: write(5),
      schema: {
        tags,
        security,
        summary: 'Pause a deployed strategy; close_positions closes its positions first',
        params: StrategyIdSchema,
        body: Type.Optional(PauseBodySchema),
        response: { 200: StrategySchema, 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request) => {
      const userId = request.principal!.userId
      try {
        await pauseStrategy(deployContext(request), request.params.id, request.body?.close_positions ?? false)
      } finally {
        forgetStrategy(cache, userId, request.params.id)
      }
      return getStrategy(context(request), request.params.id)
    },
  )
}
