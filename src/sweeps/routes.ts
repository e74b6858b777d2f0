import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../db/connect.js'
import { type Access, requireScope } from '../http/access.js'
import { ErrorEnvelopeSchema, SIGNED_SECURITY as security } from '../http/common-schemas.js'
import { AppError } from '../http/errors.js'
import type { SharedState } from '../http/shared-state.js'
import type { TemplateCatalog } from '../custom-templates/template-catalog.js'
import { CancelSchema, NoQuerySchema, STRATEGY_ID_SCOPE } from '../backtests/schemas.js'
import { askedColumns, equityDays, firstOfCursor, parseRunIds, returnsMatrix, returnsText, returnsWeight } from './returns.js'
import { MAX_RETURN_COLUMNS, RETURN_PAGE_COLUMNS, ReturnsQuerySchema, ReturnsSchema, type SweepConfig, RunPageSchema, RunsQuerySchema, SweepCreateSchema, SweepIdSchema, SweepListQuerySchema, SweepPageSchema, SweepSchema } from './schemas.js'
import { cancelSweep, createSweep, getSweep, ownSweep, pageSweepRuns, pageSweeps, type SweepContext } from './service.js'
import { absentBodyAsEmpty } from '../http/json-body.js'
import { pacedStream } from '../http/paced-stream.js'

export interface SweepRoutesOptions {
  db: Db
  now: () => number
  shared: SharedState
  templates: TemplateCatalog
  enqueue: SweepContext['enqueue']
  tradable: SweepContext['tradable']
  market: SweepContext['market']
}

const read = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, scope: 'backtests:read' } })
const write = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, scope: 'backtests:write' } })
const tags = ['sweeps']
const errors = { 400: ErrorEnvelopeSchema, 401: ErrorEnvelopeSchema, 403: ErrorEnvelopeSchema, 404: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema }

const DESCRIPTION =
  'A sweep runs one backtest per configuration of a template (a grid, or a seeded random search) over the same history, spread over every worker, then reports its best run and how likely that winner is an artefact of the search: the Deflated Sharpe Ratio and the Probability of Backtest Overfitting (CSCV), with an optional walk-forward. It counts as one of your 5 queued or running backtests; at most 10,000 configurations.'

/** Parameter sweeps (issue 23): our addition beside the spec's backtest jobs. */
export const sweepRoutes: FastifyPluginAsync<SweepRoutesOptions> = async (fastify, options) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const context = (request: FastifyRequest): SweepContext => ({
    db: options.db,
    userId: request.principal!.userId,
    now: new Date(options.now()),
    templates: options.templates,
    shared: options.shared,
    enqueue: options.enqueue,
    tradable: options.tradable,
    market: options.market,
  })

  app.post(
    '/v1/backtest/sweeps',
    {
      config: write(50),
      schema: {
        tags,
        security,
        summary: 'Submit a parameter sweep',
        description: `${DESCRIPTION} A range in which the exchange holds no bar of a symbol is refused here, 400 NO_DATA on base.start naming the symbol, the range and the coverage the exchange has.`,
        body: SweepCreateSchema,
        response: { 202: SweepSchema, 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request, reply) => {
      if (request.body.base.strategy_id !== undefined) requireScope(request.principal!, 'strategies:read', `base.${STRATEGY_ID_SCOPE}`)
      return reply.code(202).send(await createSweep(context(request), request.body))
    },
  )

  app.get(
    '/v1/backtest/sweeps',
    {
      config: read(5),
      schema: { tags, security, summary: "The caller's sweeps, newest first", querystring: SweepListQuerySchema, response: { 200: SweepPageSchema, ...errors } },
    },
    async (request) => pageSweeps(context(request), request.query),
  )

  app.get(
    '/v1/backtest/sweeps/:id',
    {
      config: read(2),
      schema: { tags, security, summary: 'One sweep with its result; poll at most once every 5 s', params: SweepIdSchema, querystring: NoQuerySchema, response: { 200: SweepSchema, ...errors } },
    },
    async (request) => getSweep(context(request), request.params.id),
  )

  app.post(
    '/v1/backtest/sweeps/:id/cancel',
    {
      config: write(5),
      preValidation: absentBodyAsEmpty,
      schema: {
        tags,
        security,
        summary: 'Cancel a queued or running sweep; 409 INVALID_STATE once terminal. Runs already stored stay readable.',
        params: SweepIdSchema,
        body: CancelSchema,
        response: { 200: SweepSchema, 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request) => cancelSweep(context(request), request.params.id, request.body),
  )

  app.get(
    '/v1/backtest/sweeps/:id/runs',
    {
      config: read(5),
      schema: {
        tags,
        security,
        summary: "Every configuration's params and metrics stored so far; sort=objective ranks them by the sweep's objective",
        params: SweepIdSchema,
        querystring: RunsQuerySchema,
        response: { 200: RunPageSchema, ...errors },
      },
    },
    async (request) => pageSweepRuns(context(request), request.params.id, request.query),
  )

  app.get(
    '/v1/backtest/sweeps/:id/returns',
    {
      // The lookup's weight; the answer's own is charged in proportion to its size (returnsWeight).
      config: read(2),
      schema: {
        tags,
        security,
        summary: 'The T × N matrix of daily returns the statistics were computed from (a done sweep)',
        description: `JSON {run_ids, dates, returns}, or CSV (\`date\` then one column per run id) with Accept: text/csv or ?format=csv. r_t = E_t / E_{t−1} − 1 of each run’s daily equity; numbers in their shortest exact form, so every statistic can be recomputed. At most ${RETURN_PAGE_COLUMNS} columns a request: a larger sweep is read in pages (limit, then each answer's Link rel="next"). Weight 2 plus 1 per ${'20,000'} numbers sent.`,
        params: SweepIdSchema,
        querystring: ReturnsQuerySchema,
        produces: ['application/json', 'text/csv'],
        response: { 200: Type.Union([ReturnsSchema, Type.String({ description: 'text/csv' })]), 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request, reply) => {
      const { db, userId } = context(request)
      // A bad query is the request's fault whatever the sweep: 400 before the lookup.
      if (request.query.run_ids !== undefined) parseRunIds(request.query.run_ids, MAX_RETURN_COLUMNS)
      if (request.query.cursor !== undefined) firstOfCursor(request.query.cursor)
      const sweep = await ownSweep(db, userId, request.params.id)
      if (sweep.status !== 'done') throw new AppError('INVALID_STATE', `sweep ${sweep.id} is ${sweep.status}; its returns matrix is complete once it is done`)
      const { columns, next } = askedColumns(request.query, (sweep.config as SweepConfig).configurations)
      const days = await equityDays(db, sweep.id)
      await request.addWeight!(returnsWeight(Math.max(0, days.length - 1), columns))
      const matrix = await returnsMatrix(db, sweep.id, columns, days)
      const csv = request.query.format === 'csv' || (request.query.format === undefined && wantsCsv(request.headers.accept))
      if (next !== null) reply.header('link', `<${pageUrl(request.url, next)}>; rel="next"`)
      if (csv) reply.type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${sweep.id}-returns.csv"`)
      else reply.type('application/json; charset=utf-8')
      // Written as the client reads it, a piece at a time (Fastify pipes a stream to the socket and
      // serializes nothing; the schema above documents the bytes).
      return reply.send(pacedStream(returnsText(matrix, csv ? 'csv' : 'json')) as unknown as string)
    },
  )
}

/** The request's own URL with the next page's cursor: the client signs and sends it as it is. */
function pageUrl(url: string, cursor: string): string {
  const [path, search] = url.split('?', 2) as [string, string | undefined]
  const query = new URLSearchParams(search)
  query.set('cursor', cursor)
  return `${path}?${query.toString()}`
}

/** text/csv preferred over JSON by the Accept header (a plain `*\/*` or none means JSON). */
function wantsCsv(accept: string | undefined): boolean {
  if (!accept) return false
  const types = accept.split(',').map((part) => part.split(';')[0]!.trim().toLowerCase())
  const csv = types.indexOf('text/csv')
  const json = types.indexOf('application/json')
  return csv !== -1 && (json === -1 || csv < json)
}
