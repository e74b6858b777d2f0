import { ErrorEnvelopeSchema } from '../http/common-schemas.js'
import { type SchemaNode, toOpenApi30 } from './openapi-30.js'

interface Operation {
  tags?: string[]
  parameters?: { schema?: unknown }[]
  requestBody?: { content?: Record<string, { schema?: unknown }> }
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>
}

interface Document {
  paths?: Record<string, Record<string, Operation>>
  components?: { schemas?: Record<string, unknown>; securitySchemes?: Record<string, unknown> }
  tags?: { name: string; description?: string }[]
  servers?: { url: string; description?: string }[]
  [key: string]: unknown
}

/** One line per capability tag (the routes name the tags; this says what each holds). */
const TAG_DESCRIPTIONS: Record<string, string> = {
  'API keys': 'Your API keys and their scopes (Bearer app token only)',
  backtests: 'Asynchronous backtest jobs: create, list, read, cancel',
  'exchange keys': 'Your registered exchange keys, used by live strategy runs (Bearer app token only)',
  'market data': "The gateway's own market data, public and /v1",
  'market data (Binance mirror, our additions)': 'More of the exchange API mirrored unchanged, so exchange clients work with Perpetua as their base URL',
  'market data (mirror)': "The spec's mirrored endpoints: the exchange's answer, unchanged",
  ops: 'Health, readiness and metrics',
  'sign-in': 'Exchange an identity-provider token for an app token',
  'sign-in and keys': 'Registered-key lookups by email',
  strategies: 'Signed strategies: records, deploy and pause, orders, trades and the status stream',
  'strategies (public)': 'The public strategy records (metadata only, no execution)',
  templates: 'Strategy templates and their parameter schemas',
  trading: 'Orders and positions on the exchange with credentials in the body (outside the spec)',
  webhooks: 'Webhook subscriptions, test deliveries and delivery history',
}

const ENVELOPE_REF = { $ref: '#/components/schemas/ErrorEnvelope' }
const ENVELOPE_TITLE = (ErrorEnvelopeSchema as { title?: string }).title

/**
 * @fastify/swagger's `transformObject` hook, run once on the whole document: every schema into
 * OpenAPI 3.0's dialect (openapi-30.ts), the /v1 error envelope as one named component that every
 * error answer refers to (generators then emit one error type, not one per operation), the server
 * (relative, so the document serves whichever host answered it) and the list of tags.
 */
export function transformDocument({ openapiObject }: { openapiObject: Partial<Document> }): Document {
  const document = openapiObject as Document
  const tags = new Set<string>()
  for (const methods of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(methods)) {
      for (const tag of operation.tags ?? []) tags.add(tag)
      for (const parameter of operation.parameters ?? []) parameter.schema = toOpenApi30(parameter.schema)
      for (const media of Object.values(operation.requestBody?.content ?? {})) media.schema = toOpenApi30(media.schema)
      for (const response of Object.values(operation.responses ?? {})) {
        for (const media of Object.values(response.content ?? {})) {
          media.schema = isEnvelope(media.schema) ? ENVELOPE_REF : toOpenApi30(media.schema)
        }
      }
    }
  }
  const schemas = Object.fromEntries(Object.entries(document.components?.schemas ?? {}).map(([name, schema]) => [name, toOpenApi30(schema)]))
  const { title: _title, ...envelope } = toOpenApi30(ErrorEnvelopeSchema) as SchemaNode
  return {
    ...document,
    servers: document.servers ?? [{ url: '/', description: 'The Perpetua that serves this document' }],
    tags: [...tags].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? name })),
    components: { ...document.components, schemas: { ...schemas, ErrorEnvelope: { ...envelope, description: 'The body of every /v1 error' } } },
  }
}

function isEnvelope(schema: unknown): boolean {
  return typeof schema === 'object' && schema !== null && (schema as { title?: unknown }).title === ENVELOPE_TITLE
}
