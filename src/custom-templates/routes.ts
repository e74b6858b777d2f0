import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { Db } from '../db/connect.js'
import type { Access } from '../http/access.js'
import { ErrorEnvelopeSchema, SIGNED_SECURITY as security } from '../http/common-schemas.js'
import { SANDBOX_LIMITS } from './sandbox/limits.js'
import type { StrategySandbox } from './sandbox/contract.js'
import {
  CustomTemplateCreateSchema,
  CustomTemplateSchema,
  CustomTemplateUpdateSchema,
  TemplateDetailSchema,
  TemplateGetQuerySchema,
  TemplateIdSchema,
  TemplateListSchema,
} from './schemas.js'
import { createCustomTemplate, type CustomTemplateContext, deleteCustomTemplate, getAnyTemplate, listAllTemplates, updateCustomTemplate } from './service.js'

export interface TemplateRoutesOptions {
  db: Db
  now: () => number
  /** Inspects uploaded modules before they are stored. */
  sandbox: StrategySandbox
}

const read = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, scope: 'strategies:read' } })
const write = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, scope: 'strategies:write' } })
const tags = ['templates']
const errors = { 400: ErrorEnvelopeSchema, 401: ErrorEnvelopeSchema, 403: ErrorEnvelopeSchema, 404: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema }
const ADDITION = 'Our addition to the interface (issue 22: your own strategies).'
const UPLOAD =
  `The module is loaded in the sandbox and checked before anything is stored: it parses, exports the contract, its params are well formed ` +
  `(defaults within bounds), warmup is a finite integer under the cap and a smoke run over recorded bars finishes within the limits. ` +
  `A refusal is 400 INVALID_PARAMETER (field source) with the module's line:column where there is one. ` +
  `Source at most ${SANDBOX_LIMITS.sourceBytes} bytes of UTF-8; at most ${SANDBOX_LIMITS.templatesPerUser} templates per account and ${SANDBOX_LIMITS.versionsPerTemplate} versions per template (429 LIMIT_REACHED).`

/** The strategy templates: the built-ins and each user's own modules (custom templates, issue 22). */
export const templateRoutes: FastifyPluginAsync<TemplateRoutesOptions> = async (fastify, { db, now, sandbox }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const context = (request: FastifyRequest): CustomTemplateContext => ({ db, userId: request.principal!.userId, now: new Date(now()), sandbox })

  app.get(
    '/v1/templates',
    {
      config: { access: { kind: 'v1', signed: true, weight: 1 } },
      schema: {
        tags,
        security,
        summary: 'Strategy templates with their params JSON schemas, defaults and minimum capital: the built-ins, then your own',
        description:
          'Signed, no scope: the built-ins. Your own templates (custom: true) follow at their latest version, without their source, only for a caller holding strategies:read (they are your strategies, as GET /v1/templates/{id} is).',
        response: { 200: TemplateListSchema, 401: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema },
      },
    },
    async (request) => listAllTemplates(context(request), { custom: request.principal!.scopes.has('strategies:read') }),
  )

  app.post(
    '/v1/templates',
    {
      config: write(10),
      schema: {
        tags,
        security,
        summary: 'Upload a strategy module as a new custom template (version 1)',
        description: `${ADDITION} ${UPLOAD}`,
        body: CustomTemplateCreateSchema,
        response: { 201: CustomTemplateSchema, ...errors },
      },
    },
    async (request, reply) => reply.code(201).send(await createCustomTemplate(context(request), request.body)),
  )

  app.get(
    '/v1/templates/:id',
    {
      config: read(1),
      schema: {
        tags,
        security,
        summary: 'One template: a built-in, or one of yours with its source and versions',
        description: `${ADDITION} Another user's template is 404, as an unknown id.`,
        params: TemplateIdSchema,
        querystring: TemplateGetQuerySchema,
        response: { 200: TemplateDetailSchema, ...errors },
      },
    },
    async (request) => getAnyTemplate(context(request), request.params.id, request.query.version),
  )

  app.put(
    '/v1/templates/:id',
    {
      config: write(10),
      schema: {
        tags,
        security,
        summary: 'Upload a new version of one of your templates; 409 INVALID_STATE for a built-in id',
        description: `${ADDITION} ${UPLOAD} Strategies and jobs keep the version they pinned.`,
        params: TemplateIdSchema,
        body: CustomTemplateUpdateSchema,
        response: { 200: CustomTemplateSchema, 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request) => updateCustomTemplate(context(request), request.params.id, request.body),
  )

  app.delete(
    '/v1/templates/:id',
    {
      config: write(5),
      schema: {
        tags,
        security,
        summary: 'Delete one of your templates; 409 INVALID_STATE while a deployed strategy uses it or for a built-in id',
        description: `${ADDITION} Jobs and strategies that recorded a version keep their record of it.`,
        params: TemplateIdSchema,
        response: { 204: Type.Null({ description: 'Deleted' }), 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request, reply) => {
      await deleteCustomTemplate(context(request), request.params.id)
      return reply.code(204).send(null)
    },
  )
}
