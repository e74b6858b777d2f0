import type { FastifyInstance } from 'fastify'

/**
 * Parses JSON bodies while keeping the exact bytes, which request signatures cover (DESIGN §5).
 * Parsing itself is Fastify's default (secure-json-parse: prototype-poisoning keys are refused).
 * JSON is the only body type: Fastify's built-in text/plain parser is removed so a text body is
 * 415, not a string that reaches validation (or, on /v1, a misleading 401 bad signature).
 */
export function installJsonBody(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error')
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const raw = body as Buffer
    request.rawBody = raw
    if (raw.length === 0) return done(null, undefined) // a signed POST without a body
    const text = raw.toString('utf8')
    parse(request, text, (error, value) => {
      if (error) return done(error, undefined)
      // Only a \u escape can produce NUL or a lone surrogate (raw UTF-8 cannot), and only a long
      // exponent or digit run can overflow a double, so most bodies skip the walk.
      const unstorable = UNSTORABLE_ESCAPE.test(text) || OVERFLOWING_NUMBER.test(text) ? findUnstorable(value, '') : undefined
      done(unstorable ? unstorableError(unstorable) : null, unstorable ? undefined : value)
    })
  })
}

const UNSTORABLE_ESCAPE = /\\u(0000|d[89a-f])/i
// 1e400 parses to Infinity, which JSON.stringify (and so jsonb) turns into null: refused, not altered.
const OVERFLOWING_NUMBER = /[eE][+-]?\d{3,}|\d{300,}/
// NUL (PostgreSQL text and jsonb refuse it) or a surrogate half without its partner (jsonb refuses it,
// text silently turns it into U+FFFD): either way a 500 or altered data, so both are refused up front.
const UNSTORABLE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/** The JSON pointer of the first string (key or value) or number PostgreSQL cannot store as sent, if any. */
function findUnstorable(value: unknown, pointer: string): string | undefined {
  if (typeof value === 'string') return UNSTORABLE_TEXT.test(value) ? pointer : undefined
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : pointer
  if (typeof value !== 'object' || value === null) return undefined
  for (const [key, item] of Object.entries(value)) {
    const here = `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`
    if (UNSTORABLE_TEXT.test(key)) return here
    const found = findUnstorable(item, here)
    if (found !== undefined) return found
  }
  return undefined
}

/** Shaped like a Fastify schema-validation error, so both route families report it as one. */
function unstorableError(pointer: string): Error {
  const message = 'must not contain NUL characters, unpaired surrogates or numbers beyond double range'
  return Object.assign(new Error(`body${pointer} ${message}`), {
    statusCode: 400,
    validationContext: 'body',
    validation: [{ keyword: 'unicode', instancePath: pointer, schemaPath: '', params: {}, message }],
  })
}
