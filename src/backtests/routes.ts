import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { Db } from '../db/connect.js'
import type { MarketData } from '../market/market-data.js'
import { coverageOf } from './coverage.js'
import { type Access, requireScope } from '../http/access.js'
import { ErrorEnvelopeSchema, SIGNED_SECURITY as security } from '../http/common-schemas.js'
import type { SharedState } from '../http/shared-state.js'
import type { TemplateCatalog } from '../custom-templates/template-catalog.js'
import { CancelSchema, CoverageQuerySchema, CoverageSchema, NoQuerySchema, JobCreateSchema, JobIdSchema, JobListQuerySchema, JobPageSchema, JobSchema, STRATEGY_ID_SCOPE } from './schemas.js'
import { type BacktestContext, cancelJob, createJob, getJob, pageJobs } from './service.js'
import { absentBodyAsEmpty } from '../http/json-body.js'

export interface BacktestRoutesOptions {
  db: Db
  now: () => number
  market: MarketData
  shared: SharedState
  templates: TemplateCatalog
  enqueue: BacktestContext['enqueue']
  tradable: BacktestContext['tradable']
  /** Markdown describing fills, fees, funding, liquidation and metrics, shown on the job schema. */
  semantics: string
}

const read = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, scope: 'backtests:read' } })
const write = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, scope: 'backtests:write' } })
const tags = ['backtests']
const errors = { 400: ErrorEnvelopeSchema, 401: ErrorEnvelopeSchema, 403: ErrorEnvelopeSchema, 404: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema }

/** Asynchronous backtest jobs (spec "Backtest endpoints"). */
export const backtestRoutes: FastifyPluginAsync<BacktestRoutesOptions> = async (fastify, options) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const context = (request: FastifyRequest): BacktestContext => ({
    db: options.db,
    userId: request.principal!.userId,
    now: new Date(options.now()),
    templates: options.templates,
    shared: options.shared,
    enqueue: options.enqueue,
    tradable: options.tradable,
  })
  const job = { ...JobSchema, description: options.semantics }

  app.post(
    '/v1/backtest/jobs',
    {
      config: write(20),
      schema: {
        tags,
        security,
        summary: 'Submit a backtest (at most 5 queued or running per user)',
        description: options.semantics,
        body: JobCreateSchema,
        response: { 200: job, 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request) => {
      if (request.body.strategy_id !== undefined) requireScope(request.principal!, 'strategies:read', STRATEGY_ID_SCOPE)
      return createJob(context(request), request.body)
    },
  )

  app.get(
    '/v1/backtest/jobs',
    {
      config: read(5),
      schema: {
        tags,
        security,
        summary: "The caller's jobs, newest first; list items carry only metrics",
        querystring: JobListQuerySchema,
        response: { 200: JobPageSchema, ...errors },
      },
    },
    async (request) => pageJobs(context(request), request.query),
  )

  app.get(
    '/v1/backtest/coverage',
    {
      config: read(1),
      schema: {
        tags,
        security,
        summary: "The range of bars the exchange holds for a symbol and timeframe (what a backtest's start and end may span)",
        description:
          "start is the first bar's open, end the last closed bar's close by the exchange's clock (the built-in replay exchange's clock trails ours by months); both null when the exchange has none. Asked of the exchange, so a form can offer only ranges with data.",
        querystring: CoverageQuerySchema,
        response: { 200: CoverageSchema, 502: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request) => coverageOf(options.market.session(), request.query.symbol, request.query.timeframe, options.now()),
  )

  app.get(
    '/v1/backtest/jobs/:id',
    {
      config: read(2),
      schema: {
        tags,
        security,
        summary: 'One job with its whole equity curve and trades; poll at most once every 5 s',
        params: JobIdSchema,
        querystring: NoQuerySchema,
        response: { 200: job, ...errors },
      },
    },
    async (request) => getJob(context(request), request.params.id),
  )

  app.post(
    '/v1/backtest/jobs/:id/cancel',
    {
      config: write(5),
      preValidation: absentBodyAsEmpty,
      schema: {
        tags,
        security,
        summary: 'Cancel a queued or running job; 409 INVALID_STATE once terminal',
        params: JobIdSchema,
        body: CancelSchema,
        response: { 200: job, 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request) => cancelJob(context(request), request.params.id, request.body),
  )
}
