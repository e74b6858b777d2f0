import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync } from 'fastify'
import type { Access } from '../http/access.js'
import { ErrorEnvelopeSchema, SIGNED_SECURITY as security } from '../http/common-schemas.js'
import { listTemplates } from './registry.js'
import { TemplateListSchema } from './schemas.js'

const access: Access = { kind: 'v1', signed: true, weight: 1 }

/** GET /v1/templates: the strategy templates with their param schemas (signed, no scope). */
export const templateRoutes: FastifyPluginAsync = async (fastify) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  // The list is fixed at build time; computing it once keeps the handler to a lookup.
  const body = { data: listTemplates() }

  app.get(
    '/v1/templates',
    {
      config: { access },
      schema: {
        tags: ['templates'],
        security,
        summary: 'Strategy templates with their params JSON schemas, defaults and minimum capital',
        response: { 200: TemplateListSchema, 401: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema },
      },
    },
    async () => body,
  )
}
