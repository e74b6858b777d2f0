import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifyRequest } from 'fastify'
import { Type } from 'typebox'
import type { SecretBox } from '../auth/secret-box.js'
import type { Db } from '../db/connect.js'
import type { Access } from '../http/access.js'
import { ErrorEnvelopeSchema, SIGNED_SECURITY as security } from '../http/common-schemas.js'
import type { WebhookPipeline } from './pipeline.js'
import {
  CreatedWebhookSchema,
  DeliveryListQuerySchema,
  DeliveryPageSchema,
  NoQuerySchema,
  TestDeliveryBodySchema,
  TestDeliveryResultSchema,
  WebhookCreateSchema,
  WebhookIdSchema,
  WebhookListQuerySchema,
  WebhookPageSchema,
  WebhookPatchSchema,
  WebhookSchema,
} from './schemas.js'
import { createWebhook, getWebhook, pageDeliveries, pageWebhooks, patchWebhook, removeWebhook, testWebhook, type WebhookContext } from './service.js'
import { absentBodyAsEmpty } from '../http/json-body.js'

export interface WebhookRoutesOptions {
  db: Db
  now: () => number
  secrets: SecretBox
  allowPrivateHosts: boolean
  pipeline: WebhookPipeline
}

const read = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, scope: 'webhooks:read' } })
const write = (weight: number): { access: Access } => ({ access: { kind: 'v1', signed: true, weight, scope: 'webhooks:write' } })
const tags = ['webhooks']
const errors = { 400: ErrorEnvelopeSchema, 401: ErrorEnvelopeSchema, 403: ErrorEnvelopeSchema, 404: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema }
const ADDITION = 'Our addition to the interface (the spec announces these operations without defining them).'

/** Webhook subscriptions (spec "Webhook endpoints") plus read-one, update, delete and the delivery log. */
export const webhookRoutes: FastifyPluginAsync<WebhookRoutesOptions> = async (fastify, options) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  const context = (request: FastifyRequest): WebhookContext => ({
    db: options.db,
    userId: request.principal!.userId,
    now: new Date(options.now()),
    secrets: options.secrets,
    allowPrivateHosts: options.allowPrivateHosts,
    pipeline: options.pipeline,
  })

  app.get(
    '/v1/webhooks',
    {
      config: read(2),
      schema: {
        tags,
        security,
        summary: "The caller's webhooks, newest first; never the secret",
        querystring: WebhookListQuerySchema,
        response: { 200: WebhookPageSchema, ...errors },
      },
    },
    async (request) => pageWebhooks(context(request), request.query),
  )

  app.post(
    '/v1/webhooks',
    {
      config: write(5),
      schema: {
        tags,
        security,
        summary: 'Subscribe an https URL to events (at most 25 per account); the secret is shown only here',
        description:
          'Deliveries follow Standard Webhooks: headers webhook-id (the event id, stable across retries), webhook-timestamp ' +
          '(Unix seconds) and webhook-signature `v1,<base64 HMAC-SHA256(key, id + "." + timestamp + "." + body)>` where key is ' +
          'the base64url decoding of the secret. The secret is made of letters and digits only, so it is the same key read as ' +
          'standard base64: the Standard Webhooks libraries take it exactly as returned, e.g. in Node ' +
          '`new Webhook(secret).verify(rawBody, headers)` with `import { Webhook } from "standardwebhooks"` (or from "svix"), ' +
          'in Python `standardwebhooks.Webhook(secret).verify(raw_body, headers)`. A secret issued before this rule may contain ' +
          '`-` or `_`: give those libraries `secret.replaceAll("-", "+").replaceAll("_", "/")`, the same key in standard base64. ' +
          'Body `{"id","type","timestamp","data"}`. A 2xx within 10 s succeeds; redirects ' +
          'are failures. Retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 24 h (±10 %). 10 consecutive failures or a 410 ' +
          'pause the webhook, 50 mark it broken; deliveries are held while it is not active.',
        body: WebhookCreateSchema,
        response: { 200: CreatedWebhookSchema, 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request) => createWebhook(context(request), request.body),
  )

  app.get(
    '/v1/webhooks/:id',
    {
      config: read(1),
      schema: { tags, security, summary: 'One webhook, without its secret', description: ADDITION, params: WebhookIdSchema, querystring: NoQuerySchema, response: { 200: WebhookSchema, ...errors } },
    },
    async (request) => getWebhook(context(request), request.params.id),
  )

  app.patch(
    '/v1/webhooks/:id',
    {
      config: write(5),
      schema: {
        tags,
        security,
        summary: 'Change url, events, description or threshold; status active reactivates a paused or broken webhook',
        description: `${ADDITION} Reactivation resets consecutive_failures to 0 and sends the deliveries held meanwhile (up to 72 h old).`,
        params: WebhookIdSchema,
        body: WebhookPatchSchema,
        response: { 200: WebhookSchema, 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request) => patchWebhook(context(request), request.params.id, request.body),
  )

  app.delete(
    '/v1/webhooks/:id',
    {
      config: write(5),
      schema: {
        tags,
        security,
        summary: 'Delete a webhook and its pending deliveries',
        description: ADDITION,
        params: WebhookIdSchema,
        response: { 204: Type.Null({ description: 'Deleted' }), ...errors },
      },
    },
    async (request, reply) => {
      await removeWebhook(context(request), request.params.id)
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/v1/webhooks/:id/test',
    {
      config: write(10),
      preValidation: absentBodyAsEmpty,
      schema: {
        tags,
        security,
        summary: 'Send a synthetic event now and wait for the answer (at most 10 s)',
        description:
          'The event (id evt_test_<12 hex>) goes through the normal pipeline: same headers and signing, recorded and counted; ' +
          'a success resets consecutive_failures, a failure joins the retry schedule. A failed delivery is still HTTP 200 with delivered false.',
        params: WebhookIdSchema,
        body: TestDeliveryBodySchema,
        response: { 200: TestDeliveryResultSchema, 409: ErrorEnvelopeSchema, ...errors },
      },
    },
    async (request) => testWebhook(context(request), request.params.id, request.body),
  )

  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      config: read(2),
      schema: {
        tags,
        security,
        summary: 'Recent delivery attempts, newest first: status, latency, error, and what happens next',
        description: `${ADDITION} Finished deliveries are kept 7 days.`,
        params: WebhookIdSchema,
        querystring: DeliveryListQuerySchema,
        response: { 200: DeliveryPageSchema, ...errors },
      },
    },
    async (request) => pageDeliveries(context(request), request.params.id, request.query),
  )
}
