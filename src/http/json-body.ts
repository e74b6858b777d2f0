import { isUtf8 } from 'node:buffer'
import type { FastifyInstance } from 'fastify'
import { AppError } from './errors.js'
import { MAX_JSON_DEPTH, pointerSegment, tooDeepMember } from './json-depth.js'

/**
 * Parses JSON bodies while keeping the exact bytes, which request signatures cover (DESIGN §5).
 * Parsing itself is Fastify's default (secure-json-parse: prototype-poisoning keys are refused).
 * JSON is the only body type: Fastify's built-in text/plain parser is removed so a text body is
 * 415, not a string that reaches validation (or, on /v1, a misleading 401 bad signature).
 * Before parsing, the bytes must be UTF-8 (RFC 8259 §8.1; Node would turn bad bytes into U+FFFD and
 * store them) and nest at most MAX_JSON_DEPTH deep, so nothing after this recurses on deep client data.
 */
export function installJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = body as Buffer
    request.rawBody = raw
    const charset = declaredCharset(request.headers['content-type'])
    if (charset !== undefined && !UTF8_NAMES.has(charset)) return done(charsetError(charset), undefined)
    if (raw.length === 0) return done(null, undefined) // a signed POST without a body
    if (!isUtf8(raw)) return done(bodyError('', 'request body is not valid UTF-8'), undefined)
    const deep = tooDeepMember(raw)
    if (deep !== undefined) return done(bodyError(deep, `must not nest deeper than ${MAX_JSON_DEPTH} levels`), undefined)
    const text = raw.toString('utf8')
    parse(request, text, (error, value) => {
      if (error) return done(error, undefined)
      // Only a \u escape can produce NUL or a lone surrogate (raw UTF-8 cannot), and only a long
      // exponent or digit run can overflow a double, so most bodies skip the walk.
      const unstorable = UNSTORABLE_ESCAPE.test(text) || OVERFLOWING_NUMBER.test(text) ? findUnstorable(value) : undefined
      done(unstorable === undefined ? null : bodyError(unstorable, UNSTORABLE_MESSAGE), unstorable === undefined ? value : undefined)
    })
  })
}

// RFC 8259 defines no charset parameter for application/json; clients that send one send utf-8.
const UTF8_NAMES = new Set(['utf-8', 'utf8'])

function declaredCharset(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType ?? '')
  return match?.[1]?.toLowerCase()
}

function charsetError(charset: string): AppError {
  return new AppError('UNSUPPORTED_MEDIA_TYPE', `request body must be UTF-8 JSON; charset=${charset} is not accepted`)
}

const UNSTORABLE_ESCAPE = /\\u(0000|d[89a-f])/i
// 1e400 parses to Infinity, which JSON.stringify (and so jsonb) turns into null: refused, not altered.
const OVERFLOWING_NUMBER = /[eE][+-]?\d{3,}|\d{300,}/
// NUL (PostgreSQL text and jsonb refuse it) or a surrogate half without its partner (jsonb refuses it,
// text silently turns it into U+FFFD): either way a 500 or altered data, so both are refused up front.
const UNSTORABLE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/
const UNSTORABLE_MESSAGE = 'must not contain NUL characters, unpaired surrogates or numbers beyond double range'

/**
 * The JSON pointer of the first string (key or value) or number PostgreSQL cannot store as sent, if any.
 * A loop over an explicit stack, in document order: no check recurses on client data.
 */
function findUnstorable(root: unknown): string | undefined {
  // Each entry: a value, its pointer, and whether the key that leads to it is itself unstorable.
  const stack: [unknown, string, boolean][] = [[root, '', false]]
  while (stack.length > 0) {
    const [value, pointer, badKey] = stack.pop()!
    if (badKey) return pointer
    if (typeof value === 'string') {
      if (UNSTORABLE_TEXT.test(value)) return pointer
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) return pointer
    } else if (typeof value === 'object' && value !== null) {
      const entries = Object.entries(value)
      for (const [key, item] of entries.reverse()) {
        stack.push([item, `${pointer}/${pointerSegment(key)}`, UNSTORABLE_TEXT.test(key)])
      }
    }
  }
  return undefined
}

/** Shaped like a Fastify schema-validation error, so both route families report it as one. */
function bodyError(pointer: string, message: string): Error {
  return Object.assign(new Error(`body${pointer} ${message}`), {
    statusCode: 400,
    validationContext: 'body',
    validation: [{ keyword: 'unicode', instancePath: pointer, schemaPath: '', params: {}, message }],
  })
}

/** A route's preValidation for an optional body: an absent one reads as {} before validation. */
export async function absentBodyAsEmpty(request: { body: unknown }): Promise<void> {
  if (request.body === undefined) request.body = {}
}
