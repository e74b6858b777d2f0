import type { FastifyInstance } from 'fastify'

/**
 * Parses JSON bodies while keeping the exact bytes, which request signatures cover (DESIGN §5).
 * Parsing itself is Fastify's default (secure-json-parse: prototype-poisoning keys are refused).
 */
export function installJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = body as Buffer
    request.rawBody = raw
    if (raw.length === 0) return done(null, undefined) // a signed POST without a body
    parse(request, raw.toString('utf8'), done)
  })
}
