import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { AppError, type ErrorCode } from './errors.js'
import { echoRequestId } from './request-id.js'
import { SYMBOL_PATTERN, symbolProblem } from '../market/symbol-pattern.js'
import { enumMessage, oneOfMessage, quoted, readableIssues, type SchemaIssue, valueAt } from './schema-issues.js'

/**
 * One error handler for every route. `/v1` routes answer with the envelope of DESIGN §5
 * (`{"error": {code, message, request_id, field?}}`, validation failures as 400 INVALID_PARAMETER);
 * public routes keep the FastAPI shape of the original service (`{"detail": …}`, validation as 422).
 */
export function installErrorHandling(app: FastifyInstance, onUnmatched: (request: FastifyRequest, reply: FastifyReply) => void): void {
  app.setErrorHandler(renderError)

  app.setNotFoundHandler((request, reply) => {
    echoRequestId(request, reply)
    const problem: Problem = { ...base('NOT_FOUND', `no route for ${request.method} ${request.url.split('?')[0]}`, 404) }
    const sent = isVersioned(request) ? sendEnvelope(request, reply, problem) : reply.code(404).send({ detail: 'Not Found' })
    onUnmatched(request, reply) // no route, so no route's onResponse hook counts it (ops/metrics.ts)
    return sent
  })
}

/**
 * Renders any error in the shape of the request's route family. Also Fastify's `frameworkErrors`
 * option, for errors raised before routing (a malformed %-escape, a path parameter over 100
 * characters), which otherwise bypass the error handler with Fastify's own body.
 */
export function renderError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  echoRequestId(request, reply)
  const problem = toProblem(error, request)
  if (problem.status >= 500) {
    request.log.error({ err: error }, 'request failed')
  }
  for (const [name, value] of Object.entries(problem.headers)) {
    // The RateLimit fields are lists of policies: an error's own policy joins the weight budget's set by the access hook.
    const listed = LIST_FIELDS.has(name) ? reply.getHeader(name) : undefined
    reply.header(name, listed === undefined ? value : `${String(listed)}, ${value}`)
  }
  return isVersioned(request) ? sendEnvelope(request, reply, problem) : sendPublic(reply, problem)
}

const LIST_FIELDS = new Set(['ratelimit', 'ratelimit-policy'])

interface Problem {
  status: number
  code: ErrorCode
  message: string
  field: string | undefined
  headers: Record<string, string>
  /** FastAPI-style validation items, for public routes. */
  validation: FastApiValidationItem[] | undefined
  /** The public `detail` text when it differs from the message (e.g. 策略不存在). */
  publicDetail: string | undefined
}

interface FastApiValidationItem {
  type: string
  loc: (string | number)[]
  msg: string
}

function base(code: ErrorCode, message: string, status: number): Problem {
  return { status, code, message, field: undefined, headers: {}, validation: undefined, publicDetail: undefined }
}

function isVersioned(request: FastifyRequest): boolean {
  return request.url === '/v1' || request.url.startsWith('/v1/') || request.url.startsWith('/v1?')
}

function toProblem(error: FastifyError, request: FastifyRequest): Problem {
  if (error instanceof AppError) {
    return {
      ...base(error.code, error.message, error.status),
      field: error.field,
      headers: error.headers,
      publicDetail: error instanceof PublicDetailError ? error.detail : undefined,
    }
  }
  if (error.validation) return fromValidation(error, request)
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return {
        ...base('INVALID_PARAMETER', 'request body is not valid JSON', 400),
        validation: [{ type: 'json_invalid', loc: ['body'], msg: 'JSON decode error' }],
      }
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return base('PAYLOAD_TOO_LARGE', 'request body is larger than 1 MB', 413)
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return base('UNSUPPORTED_MEDIA_TYPE', 'request body must be application/json', 415)
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return base('INVALID_PARAMETER', 'content-length does not match the body', 400)
  }
  // JSON.parse failures that reach us without a Fastify code (e.g. from a custom parser).
  if (error instanceof SyntaxError) return base('INVALID_PARAMETER', 'request body is not valid JSON', 400)
  const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500
  if (status < 500) return base('INVALID_PARAMETER', error.message, status)
  return base('INTERNAL', 'internal error', 500)
}

const LOCATIONS: Record<string, string> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' }
const PARTS: Record<string, (request: FastifyRequest) => unknown> = {
  body: (request) => request.body,
  querystring: (request) => request.query,
  params: (request) => request.params,
  headers: (request) => request.headers,
}

function fromValidation(error: FastifyError, request: FastifyRequest): Problem {
  const context = error.validationContext ?? 'body'
  const where = LOCATIONS[context] ?? 'body'
  // TypeBox reports an extra property twice (as `false` schema and as additionalProperties); keep one.
  const all = readableIssues((error.validation ?? []) as unknown as SchemaIssue[])
  const meaningful = all.filter((issue) => issue.keyword !== 'boolean')
  const issues = meaningful.length > 0 ? meaningful : all
  const items = issues.map((issue) => toFastApiItem(where, issue))
  const first = items[0]
  const field = first ? first.loc.slice(1).join('.') || undefined : undefined
  const detail = issues[0] ? (inWords(issues[0], valueAt(PARTS[context]?.(request), issues[0].instancePath)) ?? first!.msg) : ''
  const message = first ? (field ? `${field}: ${detail}` : `${where}: ${detail}`) : 'request is invalid'
  return { ...base('INVALID_PARAMETER', message, 400), field, validation: items }
}

/**
 * The envelope's words where the validator's would puzzle: a value outside a set names the set and quotes
 * the value back (short values only): "timeframe: must be one of 1m, …, 1d; got "2h"" (issue 35: one
 * phrasing, where "Input should be …" and "must be one of …" both appeared); a symbol says it is upper
 * case rather than `must match pattern "^[A-Z0-9]{2,30}$"`.
 */
function inWords(issue: SchemaIssue, value: unknown): string | undefined {
  if (issue.keyword === 'enum') return oneOfMessage((issue.params.allowedValues as unknown[] | undefined) ?? [], quoted(value))
  if (issue.keyword === 'pattern' && issue.params.pattern === SYMBOL_PATTERN) return symbolProblem(value)
  return undefined
}

function toFastApiItem(where: string, issue: SchemaIssue): FastApiValidationItem {
  const path = issue.instancePath.split('/').filter(Boolean).map(unescapePointer)
  const loc: (string | number)[] = [where, ...path.map((part) => (/^\d+$/.test(part) ? Number(part) : part))]
  const msg = issue.message ?? 'is invalid'
  switch (issue.keyword) {
    case 'required': {
      const missing = (issue.params.requiredProperties as string[] | undefined) ?? []
      return { type: 'missing', loc: [...loc, ...missing.slice(0, 1)], msg: 'Field required' }
    }
    case 'additionalProperties': {
      const extra = (issue.params.additionalProperties as string[] | undefined) ?? []
      return { type: 'extra_forbidden', loc: [...loc, ...extra.slice(0, 1)], msg: 'Extra inputs are not permitted' }
    }
    case 'type':
      return { type: `${String(issue.params.type)}_type`, loc, msg: `Input should be a valid ${String(issue.params.type)}` }
    case 'enum':
      return { type: 'enum', loc, msg: enumMessage((issue.params.allowedValues as unknown[] | undefined) ?? []) }
    case 'minLength':
      return { type: 'string_too_short', loc, msg: `String should have at least ${String(issue.params.limit)} character${issue.params.limit === 1 ? '' : 's'}` }
    default:
      return { type: 'value_error', loc, msg }
  }
}

function unescapePointer(part: string): string {
  return part.replace(/~1/g, '/').replace(/~0/g, '~')
}

function sendEnvelope(request: FastifyRequest, reply: FastifyReply, problem: Problem) {
  const error: Record<string, unknown> = { code: problem.code, message: problem.message, request_id: request.id }
  if (problem.field !== undefined) error.field = problem.field
  return reply.code(problem.status).send({ error })
}

function sendPublic(reply: FastifyReply, problem: Problem) {
  if (problem.validation && (problem.code === 'INVALID_PARAMETER' || problem.status === 422)) {
    return reply.code(422).send({ detail: problem.validation })
  }
  return reply.code(problem.status).send({ detail: problem.publicDetail ?? problem.message })
}

/** An AppError whose public-route rendering carries a fixed `detail` text (the original service's wording). */
export class PublicDetailError extends AppError {
  constructor(
    code: ErrorCode,
    readonly detail: string,
    message = detail,
  ) {
    super(code, message)
  }
}
