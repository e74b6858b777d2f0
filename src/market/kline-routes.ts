import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyPluginAsync, FastifySchemaCompiler } from 'fastify'
import { type Static, type TSchema, Type } from 'typebox'
import type { Access } from '../http/access.js'
import { ErrorEnvelopeSchema } from '../http/common-schemas.js'
import { invalidParameter } from '../http/errors.js'
import { assertKnownSymbol } from './exchange-info.js'
import type { MarketRoutesOptions } from './gateway-routes.js'
import { sendJsonText } from './json-reply.js'
import type { MarketSession } from './market-data.js'
import { SymbolSchema, symbolOf, UnixMs } from './schemas.js'
import { unavailable } from './upstream-client.js'
import { okJson } from './upstream-payloads.js'
import { KLINE_INTERVALS, upstream } from './upstream-requests.js'
import { marketValidatorCompiler } from './validator.js'

export const KlinesQuerySchema = Type.Object(
  {
    symbol: { ...SymbolSchema, description: 'Uppercase futures symbol, e.g. BTCUSDT' },
    interval: Type.Enum(KLINE_INTERVALS, { description: 'Binance kline interval: 1m … 1M' }),
    startTime: Type.Optional(UnixMs('Open time of the first kline, Unix ms (inclusive)')),
    endTime: Type.Optional(UnixMs('Latest open time, Unix ms (inclusive)')),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1500, default: 500, description: '1 to 1500, default 500' })),
  },
  { additionalProperties: false },
)
export type KlinesQuery = Static<typeof KlinesQuerySchema>

/** Binance's kline row: open time, open, high, low, close, volume, close time, quote volume, trades, taker buy base, taker buy quote, ignore. */
const KlineRowSchema = Type.Array(Type.Union([Type.Integer(), Type.String()]), {
  minItems: 12,
  maxItems: 12,
  examples: [[1735689600000, '93548.80', '93620.00', '93500.10', '93610.50', '125.402', 1735689659999, '11735620.12', 2310, '70.118', '6562048.33', '0']],
})

/**
 * The market validator, with wrong values reported before missing fields: TypeBox lists `required`
 * first, so `?limit=0` alone would be blamed on the missing symbol rather than on limit, the field
 * the caller got wrong.
 */
const wrongBeforeMissing: FastifySchemaCompiler<TSchema> = (route) => {
  const validate = marketValidatorCompiler(route)
  return (value: unknown) => {
    const result = validate(value) as { error?: unknown }
    if (Array.isArray(result.error)) {
      const missing = (issue: { keyword?: unknown }) => issue.keyword === 'required'
      result.error = [...result.error.filter((issue) => !missing(issue)), ...result.error.filter(missing)]
    }
    return result as never
  }
}

const access: Access = { kind: 'data', weight: 5, scope: 'market:read' }
const errors = { 400: ErrorEnvelopeSchema, 401: ErrorEnvelopeSchema, 403: ErrorEnvelopeSchema, 429: ErrorEnvelopeSchema, 502: ErrorEnvelopeSchema }

/** GET /v1/market/klines: the plan-gated K-line endpoint (spec Authentication, pattern 2). */
export const klineRoutes: FastifyPluginAsync<MarketRoutesOptions> = async (fastify, { market, now }) => {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/v1/market/klines',
    {
      config: { access },
      validatorCompiler: wrongBeforeMissing,
      schema: {
        tags: ['market data'],
        security: [{ apiKey: [] }],
        summary: 'Klines as Binance sends them (weight 5; needs a data key and an active Standard or Pro plan)',
        description:
          'Send the data key (pk_…) in X-Service-API-Key; no signature. 401 without a valid key, 403 PLAN_REQUIRED without an ' +
          'active Standard or Pro plan. Parameters and answer follow Binance’s GET /fapi/v1/klines: without startTime the most ' +
          'recent `limit` klines up to endTime (or now), with it the first `limit` from startTime; oldest first.',
        querystring: KlinesQuerySchema,
        response: { 200: Type.Array(KlineRowSchema), ...errors },
      },
    },
    async (request, reply) => sendJsonText(reply, await klinesJson(market.session(), request.query, now())),
  )
}

/** The exchange's kline arrays as JSON text, after Binance's own parameter checks. */
export async function klinesJson(market: MarketSession, query: KlinesQuery, now: number): Promise<string> {
  const { startTime, endTime } = query
  if (startTime !== undefined && endTime !== undefined && startTime > endTime) {
    throw invalidParameter('startTime', `startTime (${startTime}) must not be after endTime (${endTime})`)
  }
  const symbol = symbolOf(query.symbol)
  await assertKnownSymbol(market, symbol)
  const entry = await market.fetch(upstream.klines({ symbol, interval: query.interval, startTime, endTime, limit: query.limit ?? 500 }, now))
  const wellFormed = entry.derive('klines', () => {
    const rows = okJson(entry, symbol)
    return Array.isArray(rows) && rows.every((row) => Array.isArray(row) && row.length >= 12)
  })
  if (!wellFormed) throw unavailable('the upstream exchange sent an unexpected klines payload')
  return entry.body
}
