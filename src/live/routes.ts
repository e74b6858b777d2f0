import websocket from '@fastify/websocket'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import type { KeyDirectory } from '../auth/key-directory.js'
import type { SecretBox } from '../auth/secret-box.js'
import type { Db } from '../db/connect.js'
import type { Principal } from '../http/access.js'
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
import { endStream, type StreamCloseCause, type StreamCredential } from './stream/open-streams.js'
import { statusData, type StreamMessage } from './stream/status-messages.js'
import type { StrategyFeed } from './stream/strategy-feed.js'
import { issueTicket, redeemTicket } from './stream/stream-ticket.js'

export interface LiveRoutesOptions {
  db: Db
  now: () => number
  secrets: SecretBox
  shared: SharedState
  feed: StrategyFeed
  /** API keys as stored now: a stream's key is checked once its socket is watched (issue 37). */
  keys: KeyDirectory
  /** The symbol's rules (tick and step) from the cached exchange info: positions print at them. */
  rules: (symbol: string) => Promise<SymbolRules>
  /** The exchange a live run trades on: its positions show the protective orders resting there. */
  upstream: UpstreamClient
}

const tags = ['strategies']
const errors = { 400: ErrorEnvelopeSchema, 401: ErrorEnvelopeSchema, 403: ErrorEnvelopeSchema, 404: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema }

/** Our additions to the spec's strategy endpoints: a run's orders and trades, and the status stream (DESIGN §6). */
export const liveRoutes: FastifyPluginAsync<LiveRoutesOptions> = async (fastify, { db, now, secrets, shared, feed, keys, rules, upstream }) => {
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
      return issueTicket(secrets, request.principal!, row.id, now())
    },
  )

  // Signature headers or Bearer like REST, or ?ticket=; checked before the upgrade, so a refusal is an HTTP answer.
  const admit = async (request: FastifyRequest<{ Params: { id: string }; Querystring: { ticket?: string } }>) => {
    let principal = request.principal
    if (principal === null) {
      const ticket = request.query.ticket
      if (ticket === undefined) {
        throw new AppError('UNAUTHENTICATED', 'the stream needs signature headers or Authorization: Bearer over the GET, or ?ticket= from POST /v1/strategies/{id}/stream-ticket')
      }
      principal = await redeemTicket(secrets, shared, ticket, request.params.id, now())
      const ended = await credentialEnded(credentialOf(principal))
      if (ended) throw new AppError('UNAUTHENTICATED', `the stream ticket was asked for with ${ended === 'expired' ? 'an app token that has expired' : `an API key since ${ended}`}`)
    }
    await ownStrategy(db, principal.userId, request.params.id, false)
    request.principal = principal
  }

  /** Why the credential no longer admits a stream (the key revoked or rotated, the token expired), or undefined. */
  const credentialEnded = async (credential: StreamCredential): Promise<StreamCloseCause | undefined> => {
    if (!('keyId' in credential)) return credential.expiresAt > now() ? undefined : 'expired'
    const key = await keys.current(credential.keyId)
    return key === undefined ? 'revoked' : key.version === credential.keyVersion ? undefined : 'rotated'
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
    wsHandler: (socket, request) => void follow(socket, request.principal!, (request.params as { id: string }).id),
  })

  async function follow(socket: WebSocket, principal: Principal, id: string): Promise<void> {
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
    // Watched before the key is read: a revocation committed after the read closes the socket through the
    // feed, one committed before it is seen by the read (issue 37: a stream outlived its key).
    const credential = credentialOf(principal)
    feed.streams.add(socket, credential)
    try {
      const ended = await credentialEnded(credential)
      if (ended) return endStream(socket, ended)
      const row = await ownStrategy(db, principal.userId, id, false)
      await send({ type: 'status', strategy_id: id, time: new Date(now()).toISOString(), data: statusData(row) })
    } catch {
      socket.close(1011, 'strategy unavailable')
    }
    for (let next = held.shift(); next; next = held.shift()) await send(next)
    held = undefined
  }
}

/** The credential that opened a stream: the signing key at its secret's version, or the app token until it expires. */
function credentialOf(principal: Principal): StreamCredential {
  if (principal.keyId !== null) return { keyId: principal.keyId, keyVersion: principal.keyVersion ?? '' }
  return { expiresAt: principal.expiresAt ?? 0 }
}
