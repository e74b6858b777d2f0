import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyPluginAsync } from 'fastify'
import { sql } from 'kysely'
import { Type } from 'typebox'
import type { Db } from '../db/connect.js'
import { migrationNames, pendingMigrations } from '../db/migrate.js'
import type { DrainState } from './drain-state.js'
import { processRegistry } from './registry.js'

export interface OpsRoutesOptions {
  db: Db
  /** METRICS_TOKEN: /metrics answers here only to `Authorization: Bearer <token>`; undefined: no /metrics here (404). */
  metricsToken: string | undefined
  drain: DrainState
}

const Status = Type.Object({ status: Type.String() })

/** Why a node is not ready, most telling first; a 503 lists every one that holds. */
const NOT_READY_REASONS = ['draining', 'database_unavailable', 'migrations_pending'] as const
type NotReadyReason = (typeof NOT_READY_REASONS)[number]

const Readiness = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('not ready')]),
    reasons: Type.Array(Type.Union(NOT_READY_REASONS.map((reason) => Type.Literal(reason))), { description: 'Empty when ready.' }),
    message: Type.Optional(Type.String({ description: 'What a person reads: the reasons in words.' })),
  },
  { additionalProperties: false },
)

const REASON_TEXT: Record<NotReadyReason, string> = {
  draining: 'the node is stopping: its runs and jobs are being handed to other nodes',
  database_unavailable: 'the database does not answer',
  migrations_pending: 'the database lacks migrations this version needs (run `perpetua migrate` or start a node that applies them)',
}

/** /healthz (the process answers), /readyz (it should get traffic, or why not), /metrics (Prometheus text, behind METRICS_TOKEN). */
export const opsRoutes: FastifyPluginAsync<OpsRoutesOptions> = async (app, { db, metricsToken, drain }) => {
  const config = { access: { kind: 'ops' as const } }
  const migrations = await migrationNames()

  app.get('/healthz', { config, schema: { tags: ['ops'], summary: 'Liveness', response: { 200: Status } } }, async () => ({
    status: 'ok',
  }))

  app.get(
    '/readyz',
    {
      config,
      schema: {
        tags: ['ops'],
        summary: 'Readiness: the node takes traffic',
        description: 'Ready: not draining, the database answers and has every migration this version knows. 503 otherwise, with the reasons.',
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (request, reply) => {
      const reasons: NotReadyReason[] = []
      // Draining is known without a query, and answered even while the database goes away under a stopping node.
      if (drain.draining) reasons.push('draining')
      try {
        await sql`select 1`.execute(db)
        if ((await pendingMigrations(db, migrations)).length > 0) reasons.push('migrations_pending')
      } catch (error) {
        if (!drain.draining) request.log.warn({ err: error }, 'readiness check failed')
        reasons.push('database_unavailable')
      }
      if (reasons.length === 0) return { status: 'ready' as const, reasons }
      return reply.code(503).send({ status: 'not ready' as const, reasons, message: reasons.map((reason) => REASON_TEXT[reason]).join('; ') })
    },
  )

  // Without a token the route does not exist: the metrics listener (METRICS_ADDR) serves them off the API port.
  if (metricsToken === undefined) return
  const expected = digest(metricsToken)
  const metricsSchema = {
    tags: ['ops'],
    summary: 'Prometheus metrics (Authorization: Bearer <METRICS_TOKEN>)',
    produces: ['text/plain'],
    response: { 200: Type.String({ description: 'Prometheus text exposition format 0.0.4' }), 401: Type.Object({ detail: Type.String() }) },
  }
  app.get('/metrics', { config, schema: metricsSchema }, async (request, reply) => {
    const given = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '')?.[1]
    // Digests of equal length compare in constant time, whatever the length given.
    if (given === undefined || !timingSafeEqual(digest(given), expected)) {
      return reply.code(401).header('www-authenticate', 'Bearer').send({ detail: 'metrics need Authorization: Bearer <METRICS_TOKEN>' })
    }
    reply.header('content-type', processRegistry.contentType)
    return processRegistry.metrics()
  })
}

const digest = (token: string): Buffer => createHash('sha256').update(token).digest()
