import { andThen, type Soon } from '../http/soon.js'
import type { Filter, ExchangeSymbol, SymbolStatus } from './exchange-info-schemas.js'
import type { MarketSession } from './market-data.js'
import type { CachedResponse } from './response-cache.js'
import { integer, okJson, text, unknownSymbol } from './upstream-payloads.js'
import { upstream } from './upstream-requests.js'
import { unavailable } from './upstream-client.js'

/**
 * Binance USD-M contract statuses onto the spec's four. Anything unknown is `halt`: a client must not
 * trade on a status we do not understand.
 */
const STATUS: Record<string, SymbolStatus> = {
  TRADING: 'trading',
  PENDING_TRADING: 'break',
  PRE_TRADING: 'break',
  BREAK: 'break',
  END_OF_DAY: 'break',
  AUCTION_MATCH: 'post_only',
  POST_ONLY: 'post_only',
  HALT: 'halt',
  PRE_DELIVERING: 'halt',
  DELIVERING: 'halt',
  DELIVERED: 'halt',
  PRE_SETTLE: 'halt',
  SETTLING: 'halt',
  CLOSE: 'halt',
}

export function mapStatus(upstreamStatus: string): SymbolStatus {
  return STATUS[upstreamStatus] ?? 'halt'
}

/** The exchange's symbols by name, in the exchange's order, with each one's JSON rendered once. */
export interface SymbolDirectory {
  symbols: Map<string, ExchangeSymbol>
  /** `{"serverTime":…` is added per request; these are the rendered records. */
  rendered: Map<string, string>
  renderedAll: string
}

/** The directory of the exchange info answer held (at once when it is fresh: http/soon.ts). */
export function symbolDirectory(market: MarketSession): Soon<SymbolDirectory> {
  return andThen(market.fetch(upstream.exchangeInfo()), (entry) => entry.derive('directory', () => buildDirectory(entry)))
}

/** Throws 400 UNKNOWN_SYMBOL unless the exchange lists `symbol`. */
export async function assertKnownSymbol(market: MarketSession, symbol: string): Promise<ExchangeSymbol> {
  const found = (await symbolDirectory(market)).symbols.get(symbol)
  if (!found) throw unknownSymbol(symbol)
  return found
}

/** GET /v1/market/exchange-info as JSON text: all symbols, or the one asked for. An unknown symbol is thrown at once when the directory is at hand. */
export function exchangeInfoJson(market: MarketSession, serverTime: number, symbol: string | undefined): Soon<string> {
  return andThen(symbolDirectory(market), (directory) => {
    if (symbol === undefined) return `{"serverTime":${serverTime},"symbols":${directory.renderedAll}}`
    const record = directory.rendered.get(symbol)
    if (record === undefined) throw unknownSymbol(symbol)
    return `{"serverTime":${serverTime},"symbols":[${record}]}`
  })
}

function buildDirectory(entry: CachedResponse): SymbolDirectory {
  const payload = okJson(entry) as { symbols?: unknown }
  if (!payload || !Array.isArray(payload.symbols)) throw unavailable('the upstream exchange sent an unexpected exchange info payload')
  const symbols = new Map<string, ExchangeSymbol>()
  const rendered = new Map<string, string>()
  for (const raw of payload.symbols as unknown[]) {
    if (typeof raw !== 'object' || raw === null) throw unavailable('the upstream exchange sent an unexpected exchange info payload')
    const record = toExchangeSymbol(raw as Record<string, unknown>)
    symbols.set(record.symbol, record)
    rendered.set(record.symbol, JSON.stringify(record))
  }
  return { symbols, rendered, renderedAll: `[${[...rendered.values()].join(',')}]` }
}

const WHAT = 'exchange info'

function toExchangeSymbol(raw: Record<string, unknown>): ExchangeSymbol {
  const filters = Array.isArray(raw.filters) ? (raw.filters as unknown[]).filter((f): f is Record<string, unknown> => typeof f === 'object' && f !== null) : []
  const byType = new Map(filters.map((filter) => [filter.filterType, filter]))
  const mapped: Filter[] = []
  const price = byType.get('PRICE_FILTER')
  if (price) mapped.push({ filterType: 'PRICE_FILTER', minPrice: text(price, 'minPrice', WHAT), maxPrice: text(price, 'maxPrice', WHAT), tickSize: text(price, 'tickSize', WHAT) })
  for (const type of ['LOT_SIZE', 'MARKET_LOT_SIZE'] as const) {
    const lot = byType.get(type)
    if (lot) mapped.push({ filterType: type, minQty: text(lot, 'minQty', WHAT), maxQty: text(lot, 'maxQty', WHAT), stepSize: text(lot, 'stepSize', WHAT) })
  }
  const notional = byType.get('MIN_NOTIONAL')
  if (notional) mapped.push({ filterType: 'MIN_NOTIONAL', minNotional: text(notional, notional.notional !== undefined ? 'notional' : 'minNotional', WHAT) })
  const orders = byType.get('MAX_NUM_ORDERS')
  if (orders) mapped.push({ filterType: 'MAX_NUM_ORDERS', maxNumOrders: integer(orders, orders.limit !== undefined ? 'limit' : 'maxNumOrders', WHAT) })
  return {
    symbol: text(raw, 'symbol', WHAT),
    status: mapStatus(text(raw, 'status', WHAT)),
    baseAsset: text(raw, 'baseAsset', WHAT),
    quoteAsset: text(raw, 'quoteAsset', WHAT),
    pricePrecision: integer(raw, 'pricePrecision', WHAT),
    quantityPrecision: integer(raw, 'quantityPrecision', WHAT),
    filters: mapped,
  }
}
