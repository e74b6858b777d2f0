import type { TSchema } from 'typebox'
import type { Access } from '../http/access.js'
import { ERROR_STATUS } from '../http/errors.js'
import { ErrorEnvelopeSchema, DetailSchema, ValidationErrorSchema, SIGNED_SECURITY } from '../http/common-schemas.js'
import { operationIdOf } from './operation-id.js'

/** The part of a Fastify route schema the document reads (the rest passes through untouched). */
interface RouteSchema {
  operationId?: string
  security?: Record<string, string[]>[]
  params?: unknown
  querystring?: unknown
  body?: unknown
  response?: Record<string, unknown>
  hide?: boolean
  [key: string]: unknown
}

interface RouteTransformInput {
  schema: RouteSchema | undefined
  url: string
  route: { method: string | string[]; config?: unknown }
}

/**
 * @fastify/swagger's `transform` hook: gives every operation what a generator needs, derived from the
 * route itself rather than repeated in each route file:
 * - an operationId from method and path (operation-id.ts), unless the route declares one;
 * - its security from `config.access` (public and ops: none; /v1: the signing headers or Bearer,
 *   optional where signing is optional; data endpoints: the `pk_` key), unless the route declares it;
 * - every error answer the shared plumbing can give, beside the ones the route lists: on /v1
 *   400 (validation), 401 (credentials), 403 (scope), 404 (a path id), 413 and 415 (bodies) and 429
 *   (weight budget); on public routes 422, 413, 415 and 429 (per-IP budget) in the FastAPI shape.
 * The route's own schema object is never mutated: Fastify serialises responses with it.
 */
export function transformRoute({ schema, url, route }: RouteTransformInput): { schema: RouteSchema | undefined; url: string } {
  if (!schema || schema.hide) return { schema, url }
  const access = (route.config as { access?: Access } | undefined)?.access
  const method = [route.method].flat()[0]!
  const answers = errorAnswers(access, schema, url)
  const response: Record<string, unknown> = { ...answers }
  for (const [status, declared] of Object.entries(schema.response ?? {})) {
    // A route that lists the bare envelope gets the described one; anything else it declares wins.
    if (declared === ErrorEnvelopeSchema) response[status] = envelope(Number(status))
    else response[status] = declared
  }
  return {
    url,
    schema: {
      ...schema,
      operationId: schema.operationId ?? operationIdOf(method, url),
      security: schema.security ?? securityOf(access),
      response,
    },
  }
}

const WHY: Record<number, string> = {
  400: 'the `field` names the input at fault',
  401: 'missing or bad credentials',
  402: 'the balance is below the capital',
  403: 'the key lacks the scope, or the plan is not active',
  404: 'the resource does not exist or is not the caller’s',
  409: 'not allowed in the resource’s current state, or a duplicate',
  413: 'the body is over 1 MB',
  415: 'the body is not UTF-8 application/json',
  429: 'a budget or limit is spent; see Retry-After',
  502: 'the upstream exchange failed',
  503: 'a dependency of this node is unavailable',
}

/** The /v1 error envelope, described by the codes that carry this status (errors.ts is the one table). */
function envelope(status: number): TSchema {
  const codes = Object.entries(ERROR_STATUS).filter(([, s]) => s === status).map(([code]) => code)
  const why = WHY[status]
  return { ...ErrorEnvelopeSchema, description: `${codes.join(', ') || 'Error'}${why ? `: ${why}` : ''}` }
}

function securityOf(access: Access | undefined): Record<string, string[]>[] {
  switch (access?.kind) {
    case 'v1':
      return access.signed ? SIGNED_SECURITY : [{}, ...SIGNED_SECURITY]
    case 'data':
      return [{ apiKey: [] }]
    default:
      return []
  }
}

function errorAnswers(access: Access | undefined, schema: RouteSchema, url: string): Record<string, TSchema> {
  const answers: Record<string, TSchema> = {}
  const hasInput = schema.params !== undefined || schema.querystring !== undefined || schema.body !== undefined
  const hasBody = schema.body !== undefined
  if (access?.kind === 'v1' || access?.kind === 'data') {
    if (hasInput) answers[400] = envelope(400)
    answers[401] = envelope(401)
    if (access.kind === 'data' || access.scope) answers[403] = envelope(403)
    if (/[:{]/.test(url)) answers[404] = envelope(404)
    if (hasBody) {
      answers[413] = envelope(413)
      answers[415] = envelope(415)
    }
    answers[429] = envelope(429)
  }
  if (access?.kind === 'public') {
    const detail = (description: string) => ({ ...DetailSchema, description })
    if (hasInput) answers[422] = { ...ValidationErrorSchema, description: 'A missing, malformed or wrong-typed input' }
    if (hasBody) {
      answers[413] = detail('The body is over 1 MB')
      answers[415] = detail('The body is not UTF-8 application/json')
    }
    answers[429] = detail('The per-IP request budget is spent; see Retry-After')
  }
  return answers
}
