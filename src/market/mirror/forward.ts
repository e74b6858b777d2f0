import type { FastifyReply } from 'fastify'
import { symbolDirectory } from '../exchange-info.js'
import { sendJsonText } from '../json-reply.js'
import type { MarketSession, UpstreamRequest } from '../market-data.js'
import type { CachedResponse } from '../response-cache.js'
import { okJson } from '../upstream-payloads.js'
import { upstream } from '../upstream-requests.js'
import { unavailable } from '../upstream-client.js'

export interface Forwarded {
  status: number
  /** Encoded once per upstream answer (the all-symbols ticker is 160 KB). */
  body: Buffer
}

/**
 * The mirror endpoints: the exchange's status and body, unchanged (its 4xx refusals included). Its
 * 5xx, 429/418 and unreachability are 502s (or the last good answer while one is kept).
 */
export async function forward(market: MarketSession, request: UpstreamRequest): Promise<Forwarded> {
  return forwarded(await market.fetch(request))
}

export function sendForwarded(reply: FastifyReply, answer: Forwarded): FastifyReply {
  return sendJsonText(reply, answer.body, answer.status)
}

export function forwarded(entry: CachedResponse): Forwarded {
  return { status: entry.status, body: entry.derive('bodyBytes', () => Buffer.from(entry.body)) }
}

/** Binance's refusal of a symbol it does not list, byte for byte. */
const INVALID_SYMBOL: Forwarded = { status: 400, body: Buffer.from('{"code":-1121,"msg":"Invalid symbol."}') }

/**
 * One symbol's answer of an endpoint that also answers for all symbols (ticker/24hr, ticker/price,
 * premiumIndex): the symbol's row of the cached all-symbols answer. One upstream call per TTL then
 * serves every symbol, where per-symbol calls would cost up to 600 × weight 1 per TTL. A symbol the
 * exchange does not list gets Binance's refusal without a call; a listed one missing from the
 * all-symbols answer (not trading) gets the exchange's own answer for it.
 */
export async function forwardRow(market: MarketSession, all: UpstreamRequest, symbol: string): Promise<Forwarded> {
  const entry = await market.fetch(all)
  if (entry.status !== 200) return forwarded(entry)
  const row = entry.derive('rowsBySymbol', () => rowsBySymbol(entry)).get(symbol)
  if (row) return { status: 200, body: row }
  if (!(await symbolDirectory(market)).symbols.has(symbol)) return INVALID_SYMBOL
  return forward(market, upstream.oneSymbol(all, symbol))
}

/** An endpoint with an all-symbols form: the whole answer, or one symbol's row of it (see forwardRow). */
export function forwardAllOrRow(market: MarketSession, all: UpstreamRequest, symbol: string | undefined): Promise<Forwarded> {
  return symbol === undefined ? forward(market, all) : forwardRow(market, all, symbol)
}

function rowsBySymbol(entry: CachedResponse): Map<string, Buffer> {
  const rows = okJson(entry)
  if (!Array.isArray(rows)) throw unavailable('the upstream exchange sent an unexpected all-symbols payload')
  const bySymbol = new Map<string, Buffer>()
  for (const row of rows as unknown[]) {
    const symbol = (row as { symbol?: unknown } | null)?.symbol
    if (typeof symbol === 'string') bySymbol.set(symbol, Buffer.from(JSON.stringify(row)))
  }
  return bySymbol
}
