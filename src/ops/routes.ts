import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyPluginAsync } from 'fastify'
import { sql } from 'kysely'
import { Type } from 'typebox'
import type { Db } from '../db/connect.js'
import { processRegistry } from './registry.js'

export interface OpsRoutesOptions {
  db: Db
  /** METRICS_TOKEN: /metrics answers here only to `Authorization: Bearer <token>`; undefined: no /metrics here (404). */
  metricsToken: string | undefined
}

const Status = Type.Object({ status: Type.String() })

/** /healthz (the process answers), /readyz (the database answers), /metrics (Prometheus text, behind METRICS_TOKEN). */
export const opsRoutes: FastifyPluginAsync<OpsRoutesOptions> = async (app, { db, metricsToken }) => {
  const config = { access: { kind: 'ops' as const } }

  app.get('/healthz', { config, schema: { tags: ['ops'], summary: 'Liveness', response: { 200: Status } } }, async () => ({
    status: 'ok',
  }))

  app.get(
    '/readyz',
    { config, schema: { tags: ['ops'], summary: 'Readiness: the database answers', response: { 200: Status, 503: Status } } },
    async (request, reply) => {
      try {
        await sql`select 1`.execute(db)
        return { status: 'ready' }
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed')
        return reply.code(503).send({ status: 'database unavailable' })
      }
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
