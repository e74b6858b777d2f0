import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import { SIGNATURE_TOLERANCE_MS } from '../auth/request-signature.js'
import { transformDocument } from './document-transform.js'
import { transformRoute } from './route-transform.js'

/** What @fastify/swagger is registered with: the document's frame and the two hooks that complete it. */
export function swaggerOptions(): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Perpetua',
        version: '0.1.0',
        description:
          'Market data, strategies, backtests and webhooks for crypto futures traders. Signed `/v1` endpoints take ' +
          `\`X-Service-API-Key\`, \`X-Service-Timestamp\` (Unix ms, within ${SIGNATURE_TOLERANCE_MS} ms of server time) and \`X-Service-Signature\` ` +
          '(lowercase hex HMAC-SHA256 of timestamp + METHOD + path_with_query + raw_body, keyed by the API secret), or ' +
          '`Authorization: Bearer <app token>`. Errors on `/v1` are `{"error": {code, message, request_id, field?}}`; ' +
          'public endpoints answer FastAPI-style `{"detail": …}`. The typed TypeScript client is `perpetua/client`.',
      },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-Service-API-Key', description: 'The API key id (pk_…); alone, the data key of plan-gated endpoints' },
          timestamp: { type: 'apiKey', in: 'header', name: 'X-Service-Timestamp', description: 'Unix time in milliseconds' },
          signature: { type: 'apiKey', in: 'header', name: 'X-Service-Signature', description: 'Lowercase hex HMAC-SHA256(secret, timestamp + METHOD + path_with_query + raw_body)' },
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The app token from POST /auth/mobile/idpa or idpb' },
        },
      },
    },
    transform: transformRoute as unknown as FastifyDynamicSwaggerOptions['transform'],
    transformObject: transformDocument as unknown as FastifyDynamicSwaggerOptions['transformObject'],
  }
}
