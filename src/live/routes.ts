import websocket from '@fastify/websocket'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import type { SecretBox } from '../auth/secret-box.js'
import type { Db } from '../db/connect.js'
import { ErrorEnvelopeSchema, SIGNED_SECURITY as security } from '../http/common-schemas.js'
import { AppError, invalidParameter } from '../http/errors.js'
import type { SharedState } from '../http/shared-state.js'
import { StrategyIdSchema } from '../strategies/schemas.js'
import { ownStrategy } from './deploy.js'
import { pageOrders, pageTrades } from './history/service.js'
import { listPositions } from './positions/service.js'
import { tradingClientOf } from './exchange/trading-client-of.js'
import type { UpstreamClient } from '../market/upstream-client.js'
import type { SymbolRules } from '../engine/types.js'
import { HistoryQuerySchema, OrderPageSchema, PositionListSchema, StreamMessageSchema, StreamQuerySchema, StreamTicketSchema, TradePageSchema } from './schemas.js'
import { statusData, type StreamMessage } from './stream/status-messages.js'
import type { StrategyFeed } from './stream/strategy-feed.js'
import { issueTicket, redeemTicket } from './stream/stream-ticket.js'

export interface LiveRoutesOptions {
  db: Db
  now: () => number
  secrets: SecretBox
  shared: SharedState
  feed: StrategyFeed
  /** The symbol's rules (tick and step) from the cached exchange info: positions print at them. */
  rules: (symbol: string) => Promise<SymbolRules>
  /** The exchange a live run trades on: its positions show the protective orders resting there. */
  upstream: UpstreamClient
}

const tags = ['strategies']
const errors = { 400: ErrorEnvelopeSchema, 401: ErrorEnvelopeSchema, 403: ErrorEnvelopeSchema, 404: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema }

/** Our additions to the spec's strategy endpoints: a run's orders and trades, and the status stream (DESIGN §6). */
export const liveRoutes: FastifyPluginAsync<LiveRoutesOptions> = async (fastify, { db, now, secrets, shared, feed, rules, upstream }) => {
  await fastify.register(websocket, { options: { maxPayload: 1024 } })
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/v1/strategies/:id/orders',
    {
      config: { access: { kind: 'v1', signed: true, weight: 5, scope: 'strategies:read' } },
      schema: {
        tags,
        security,
        summary: "Our addition: the strategy's orders across its runs, newest first",
        params: StrategyIdSchema,
        querystring: HistoryQuerySchema,
        response: { 200: OrderPageSchema, ...errors },
      },
    },
    async (request) => pageOrders(db, request.principal!.userId, request.params.id, request.query),
  )

  app.get(
    '/v1/strategies/:id/trades',
    {
      config: { access: { kind: 'v1', signed: true, weight: 5, scope: 'strategies:read' } },
      schema: {
        tags,
        security,
        summary: "Our addition: the strategy's closed trades across its runs, newest first",
        params: StrategyIdSchema,
        querystring: HistoryQuerySchema,
        response: { 200: TradePageSchema, ...errors },
      },
    },
    async (request) => pageTrades(db, request.principal!.userId, request.params.id, request.query),
  )

  app.get(
    '/v1/strategies/:id/positions',
    {
      config: { access: { kind: 'v1', signed: true, weight: 1, scope: 'strategies:read' } },
      schema: {
        tags,
        security,
        summary:
          "Our addition: the current run's open positions (or the last run's when it ended), from its ledger, with the levels protecting each and, for a live run, the protective orders resting on the exchange; [] when flat or never run",
        params: StrategyIdSchema,
        response: { 200: PositionListSchema, ...errors },
      },
    },
    async (request) => listPositions(db, request.principal!.userId, request.params.id, rules, (run) => tradingClientOf(db, secrets, upstream, run, now)),
  )

  app.post(
    '/v1/strategies/:id/stream-ticket',
    {
      config: { access: { kind: 'v1', signed: true, weight: 1, scope: 'strategies:read' } },
      schema: {
        tags,
        security,
        summary: 'Our addition: a one-time ticket (valid 30 s) to open the status stream from a browser, which cannot set headers on a WebSocket',
        params: StrategyIdSchema,
        response: { 200: StreamTicketSchema, ...errors },
      },
    },
    async (request) => {
      const row = await ownStrategy(db, request.principal!.userId, request.params.id, false)
      return issueTicket(secrets, row.user_id, row.id, now())
    },
  )

  // Signature headers or Bearer like REST, or ?ticket=; checked before the upgrade, so a refusal is an HTTP answer.
  const admit = async (request: FastifyRequest<{ Params: { id: string }; Querystring: { ticket?: string } }>) => {
    let userId = request.principal?.userId
    if (userId === undefined) {
      const ticket = request.query.ticket
      if (ticket === undefined) {
        throw new AppError('UNAUTHENTICATED', 'the stream needs signature headers or Authorization: Bearer over the GET, or ?ticket= from POST /v1/strategies/{id}/stream-ticket')
      }
      userId = await redeemTicket(secrets, shared, ticket, request.params.id, now())
    }
    await ownStrategy(db, userId, request.params.id, false)
    request.principal = request.principal ?? { userId, keyId: null, scopes: new Set() }
  }

  // wsHandler (not `websocket: true`, which hides the route from the OpenAPI document): the upgrade goes to
  // follow(), a plain GET gets a 400 saying what the endpoint is.
  app.route({
    method: 'GET',
    url: '/v1/strategies/:id/stream',
    config: { access: { kind: 'v1', signed: false, weight: 1, scope: 'strategies:read' } },
    preHandler: admit,
    schema: {
      tags,
      security,
      summary: 'Our addition: WebSocket of status, order, position_opened, position_closed and error messages; the first is the current status',
      description:
        'Messages `{"type","strategy_id","time","data"}` (the 200 schema below describes one message, sent after 101 Switching Protocols). ' +
        'Authenticate the upgrade request like REST (signature over the GET, or Bearer), or pass `?ticket=` from POST /v1/strategies/{id}/stream-ticket. ' +
        'A request without `Upgrade: websocket` answers 400.',
      params: StrategyIdSchema,
      querystring: StreamQuerySchema,
      response: { 200: StreamMessageSchema, ...errors },
    },
    handler: async () => {
      throw invalidParameter('upgrade', 'this endpoint is a WebSocket: send the GET with Upgrade: websocket')
    },
    wsHandler: (socket, request) => void follow(socket, request.principal!.userId, (request.params as { id: string }).id),
  })

  async function follow(socket: WebSocket, userId: number, id: string): Promise<void> {
    const send = (message: StreamMessage) =>
      new Promise<void>((resolve) => {
        if (socket.readyState !== socket.OPEN) return resolve()
        socket.send(JSON.stringify(message), () => resolve())
      })
    // Listen before reading the status, holding what arrives meanwhile, so nothing falls between them.
    let held: StreamMessage[] | undefined = []
    const unsubscribe = await feed.subscribe(id, (message) => (held ? void held.push(message) : send(message)))
    socket.on('close', unsubscribe)
    if (socket.readyState !== socket.OPEN) unsubscribe()
    try {
      const row = await ownStrategy(db, userId, id, false)
      await send({ type: 'status', strategy_id: id, time: new Date(now()).toISOString(), data: statusData(row) })
    } catch {
      socket.close(1011, 'strategy unavailable')
    }
    for (let next = held.shift(); next; next = held.shift()) await send(next)
    held = undefined
  }
}
