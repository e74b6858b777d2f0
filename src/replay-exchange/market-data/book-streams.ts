import type { MarketSymbol } from './market-symbol.js'
import { type BookLevel, bookTickerRow, orderBook } from './order-book.js'

/**
 * Binance's book streams over the derived book (README "Derived values"): `<symbol>@bookTicker`,
 * partial depth `<symbol>@depth<5|10|20>[@100ms|@250ms|@500ms]` and diff depth
 * `<symbol>@depth[@100ms|@250ms|@500ms]`. The derived book changes once a replay second, so the
 * streams update once a wall second whatever rate the name asks for.
 */

/** How deep a diff stream follows the book: ccxt's watchOrderBook snapshot (`/fapi/v1/depth?limit=1000`) is this deep. */
export const DIFF_DEPTH = 1000
const PARTIAL_LEVELS = new Set([5, 10, 20])

export type BookStreamKind = { kind: 'bookTicker' } | { kind: 'depth'; levels: number | undefined }

/** The book stream a lower-cased name asks for (after `<symbol>@`), or undefined. */
export function parseBookStream(rest: string): BookStreamKind | undefined {
  if (rest === 'bookticker') return { kind: 'bookTicker' }
  const depth = /^depth(\d+)?(@(100|250|500)ms)?$/.exec(rest)
  if (!depth) return undefined
  const levels = depth[1] === undefined ? undefined : Number(depth[1])
  return levels === undefined || PARTIAL_LEVELS.has(levels) ? { kind: 'depth', levels } : undefined
}

export function bookTickerEvent(symbol: MarketSymbol, now: number) {
  const row = bookTickerRow(symbol, now)
  if (!row) return undefined
  return { e: 'bookTicker', u: row.lastUpdateId, E: now, T: now, s: row.symbol, b: row.bidPrice, B: row.bidQty, a: row.askPrice, A: row.askQty }
}

/** What a diff stream last sent: its final update id and the levels the client now holds. */
export interface DiffState {
  u: number
  bids: Map<string, string>
  asks: Map<string, string>
}

/**
 * A `depthUpdate` event. Update ids are replay ms (the book's `lastUpdateId`), so a REST snapshot
 * taken between two events fits Binance's sync rules: U = previous u + 1, pu = previous u. A partial
 * stream sends its top levels; a diff stream sends every level of the top DIFF_DEPTH that is new or
 * changed and "0" for the prices it sent before that left the book.
 */
export function depthEvent(symbol: MarketSymbol, now: number, levels: number | undefined, previous: DiffState | undefined) {
  const book = orderBook(symbol, now, levels ?? DIFF_DEPTH)
  if (!book) return undefined
  const pu = previous?.u ?? now - 1
  const event = { e: 'depthUpdate', E: now, T: now, s: symbol.info.symbol, U: pu + 1, u: now, pu, b: book.bids, a: book.asks }
  if (levels !== undefined) return { event, state: { u: now, bids: new Map(), asks: new Map() } }
  const state: DiffState = { u: now, bids: new Map(book.bids), asks: new Map(book.asks) }
  if (previous) {
    event.b = changes(previous.bids, state.bids)
    event.a = changes(previous.asks, state.asks)
  }
  return { event, state }
}

function changes(before: Map<string, string>, after: Map<string, string>): BookLevel[] {
  const out: BookLevel[] = []
  for (const [price, qty] of after) if (before.get(price) !== qty) out.push([price, qty])
  for (const price of before.keys()) if (!after.has(price)) out.push([price, '0'])
  return out
}
