import type { FastifyPluginAsync } from 'fastify'
import { sql } from 'kysely'
import type { Registry } from 'prom-client'
import { Type } from 'typebox'
import type { Db } from '../db/connect.js'

export interface OpsRoutesOptions {
  db: Db
  metrics: Registry
}

const Status = Type.Object({ status: Type.String() })

/** /healthz (the process answers), /readyz (the database answers), /metrics (Prometheus text). */
export const opsRoutes: FastifyPluginAsync<OpsRoutesOptions> = async (app, { db, metrics }) => {
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

  const metricsSchema = {
    tags: ['ops'],
    summary: 'Prometheus metrics',
    produces: ['text/plain'],
    response: { 200: Type.String({ description: 'Prometheus text exposition format 0.0.4' }) },
  }
  app.get('/metrics', { config, schema: metricsSchema }, async (_request, reply) => {
    reply.header('content-type', metrics.contentType)
    return metrics.metrics()
  })
}
