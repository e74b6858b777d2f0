import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import type { ReplayClock } from '../common/clock.js'
import type { Faults } from '../common/faults.js'
import { bucketStart, type Interval, isInterval, nextBucket } from '../common/intervals.js'
import { bookTickerEvent, depthEvent, type DiffState, parseBookStream } from './book-streams.js'
import { type KlineRow, klines } from './klines.js'
import type { Market } from './market.js'
import type { MarketSymbol } from './market-symbol.js'
import { markPrice } from './premium.js'
import { tradesBefore } from './trades.js'

/**
 * Binance market streams over the replay: `<symbol>@kline_<interval>`, `<symbol>@markPrice`,
 * `<symbol>@markPrice@1s`, `!markPrice@arr[@1s]`, and the derived book's `<symbol>@bookTicker`,
 * `<symbol>@depth<levels>` and `<symbol>@depth` (book-streams.ts), raw on [/market|/public]/ws/<stream>[/<stream>…]
 * or wrapped as {"stream","data"} on [/market|/public]/stream?streams=a/b, plus the SUBSCRIBE / UNSUBSCRIBE / LIST_SUBSCRIPTIONS
 * requests. Updates go out once a wall second as replay time passes: the open kline every second
 * (after the bars that closed meanwhile, with x: true), mark prices every 3 s or every second.
 */

const TICK_MS = 1000
/** '' for the legacy /ws and /stream; Binance's routed paths since 2026-04 (live-trading research §1.1). */
export const STREAM_PREFIXES = ['', '/market', '/public'] as const
/** Closed bars sent at most per tick for one stream (a fast replay skips the rest, as a reconnecting client would). */
const MAX_CLOSED_PER_TICK = 60

type Stream =
  | { kind: 'kline'; name: string; symbol: MarketSymbol; interval: Interval; lastOpen: number | undefined }
  | { kind: 'markPrice'; name: string; symbol: MarketSymbol | undefined; everySecond: boolean; phase: number }
  | { kind: 'bookTicker'; name: string; symbol: MarketSymbol }
  | { kind: 'depth'; name: string; symbol: MarketSymbol; levels: number | undefined; sent: DiffState | undefined }

interface Connection {
  socket: WebSocket
  combined: boolean
  streams: Map<string, Stream>
}

export class StreamHub {
  private readonly connections = new Set<Connection>()
  private ticks = 0
  private timer: NodeJS.Timeout | undefined

  constructor(
    private readonly market: Market,
    private readonly clock: ReplayClock,
    /** `marketEvents: 'drop'` faults silence a stream's closed klines. */
    private readonly faults?: Pick<Faults, 'take'>,
  ) {}

  /**
   * The legacy paths and Binance's 2026 routed ones (/market for klines and mark prices, /public for
   * books), each in ws mode (/ws/<a>/<b>, raw payloads) and stream mode (/stream?streams=a/b,
   * wrapped). Every path serves every stream: the replay does not enforce the split. `claim` lets the
   * trading wing take /ws/<listenKey> (a user data stream) before it is read as market streams.
   */
  routes(app: FastifyInstance, claim: (socket: WebSocket, names: string[]) => boolean = () => false): void {
    for (const prefix of STREAM_PREFIXES) {
      app.get(`${prefix}/ws`, { websocket: true }, (socket) => this.accept(socket, false, []))
      app.get(`${prefix}/ws/*`, { websocket: true }, (socket, request: FastifyRequest) => {
        const names = ((request.params as Record<string, string>)['*'] ?? '').split('/').filter(Boolean)
        if (claim(socket, names)) return
        this.accept(socket, false, names)
      })
      app.get(`${prefix}/stream`, { websocket: true }, (socket, request: FastifyRequest) => {
        const streams = (request.query as Record<string, unknown>).streams
        this.accept(socket, true, typeof streams === 'string' ? streams.split('/').filter(Boolean) : [])
      })
    }
  }

  disconnectAll(): number {
    const count = this.connections.size
    for (const connection of this.connections) connection.socket.terminate()
    this.connections.clear()
    return count
  }

  close(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
    this.disconnectAll()
  }

  private accept(socket: WebSocket, combined: boolean, names: string[]): void {
    const connection: Connection = { socket, combined, streams: new Map() }
    // A name that is no stream is ignored, as Binance does: ccxt opens /market/ws/<n> (a number of its
    // own) and subscribes with SUBSCRIBE requests on that socket.
    for (const name of names) {
      const stream = this.parse(name)
      if (stream) connection.streams.set(stream.name, stream)
    }
    this.connections.add(connection)
    socket.on('close', () => this.connections.delete(connection))
    socket.on('error', () => this.connections.delete(connection))
    socket.on('message', (data) => this.request(connection, String(data)))
    this.timer ??= setInterval(() => this.tick(), TICK_MS).unref()
    for (const stream of connection.streams.values()) this.emit(connection, stream, true)
  }

  /** A stream by its name, matched case-insensitively and echoed as the client wrote it (Binance writes `markPrice`). */
  private parse(name: string): Stream | undefined {
    const lower = name.toLowerCase()
    const arr = /^!markprice@arr(@1s)?$/.exec(lower)
    if (arr) return { kind: 'markPrice', name, symbol: undefined, everySecond: arr[1] !== undefined, phase: this.ticks }
    // The interval stays case-sensitive: 1m is a minute, 1M a month.
    const kline = /^([a-zA-Z0-9_]+)@kline_(\w+)$/.exec(name)
    if (kline && isInterval(kline[2]!)) {
      const symbol = this.market.get(kline[1]!.toUpperCase())
      return symbol && { kind: 'kline', name, symbol, interval: kline[2], lastOpen: undefined }
    }
    const mark = /^([a-z0-9_]+)@markprice(@1s)?$/.exec(lower)
    if (mark) {
      const symbol = this.market.get(mark[1]!.toUpperCase())
      return symbol && { kind: 'markPrice', name, symbol, everySecond: mark[2] !== undefined, phase: this.ticks }
    }
    const book = /^([a-z0-9_]+)@(.+)$/.exec(lower)
    const kind = book && parseBookStream(book[2]!)
    const bookSymbol = kind && this.market.get(book[1]!.toUpperCase())
    if (!kind || !bookSymbol) return undefined
    return kind.kind === 'bookTicker' ? { kind: 'bookTicker', name, symbol: bookSymbol } : { kind: 'depth', name, symbol: bookSymbol, levels: kind.levels, sent: undefined }
  }

  /** Binance's live subscription requests: {"method": "SUBSCRIBE", "params": [...], "id": 1}. */
  private request(connection: Connection, text: string): void {
    let message: { method?: unknown; params?: unknown; id?: unknown }
    try {
      message = JSON.parse(text) as typeof message
    } catch {
      return this.send(connection, { error: { code: 3, msg: 'Invalid JSON' } })
    }
    const id = message.id ?? null
    const params = Array.isArray(message.params) ? message.params.filter((p): p is string => typeof p === 'string') : []
    if (message.method === 'LIST_SUBSCRIPTIONS') return this.send(connection, { result: [...connection.streams.keys()], id })
    if (message.method === 'SUBSCRIBE') {
      const streams = params.map((p) => this.parse(p))
      const bad = params.find((_, i) => !streams[i])
      if (bad !== undefined) return this.send(connection, { error: { code: 2, msg: `Invalid request: unknown stream ${bad}` }, id })
      this.send(connection, { result: null, id })
      for (const stream of streams) {
        connection.streams.set(stream!.name, stream!)
        this.emit(connection, stream!, true)
      }
      return
    }
    if (message.method === 'UNSUBSCRIBE') {
      for (const p of params) connection.streams.delete(p)
      return this.send(connection, { result: null, id })
    }
    this.send(connection, { error: { code: 2, msg: 'Invalid request: method must be SUBSCRIBE, UNSUBSCRIBE or LIST_SUBSCRIPTIONS' }, id })
  }

  private tick(): void {
    this.ticks++
    for (const connection of this.connections) {
      for (const stream of connection.streams.values()) this.emit(connection, stream, false)
    }
    if (this.connections.size === 0 && this.timer) {
      clearInterval(this.timer)
      this.timer = undefined
    }
  }

  private emit(connection: Connection, stream: Stream, first: boolean): void {
    const now = this.clock.now()
    if (stream.kind === 'markPrice') {
      if (!first && !stream.everySecond && (this.ticks - stream.phase) % 3 !== 0) return
      const symbols = stream.symbol ? [stream.symbol] : this.market.all()
      const updates = symbols.flatMap((symbol) => markPriceUpdate(symbol, now) ?? [])
      if (stream.symbol && updates[0]) this.publish(connection, stream.name, updates[0])
      else if (!stream.symbol) this.publish(connection, stream.name, updates)
      return
    }
    if (stream.kind === 'bookTicker') {
      const event = bookTickerEvent(stream.symbol, now)
      if (event) this.publish(connection, stream.name, event)
      return
    }
    if (stream.kind === 'depth') {
      const update = depthEvent(stream.symbol, now, stream.levels, stream.sent)
      if (!update) return
      stream.sent = update.state
      this.publish(connection, stream.name, update.event)
      return
    }
    const { symbol, interval } = stream
    const openStart = bucketStart(interval, now)
    if (stream.lastOpen !== undefined && stream.lastOpen < openStart) {
      const closed = klines(symbol, { interval, startTime: stream.lastOpen, endTime: openStart - 1, limit: MAX_CLOSED_PER_TICK }, now)
      for (const row of closed) {
        if (this.faults?.take(stream.name, 'marketEvents')) continue
        this.publish(connection, stream.name, klineEvent(symbol, interval, row, now, true))
      }
    }
    stream.lastOpen = openStart
    const [open] = klines(symbol, { interval, startTime: openStart, endTime: openStart, limit: 1 }, now)
    if (open) this.publish(connection, stream.name, klineEvent(symbol, interval, open, now, false))
  }

  private publish(connection: Connection, stream: string, data: unknown): void {
    this.send(connection, connection.combined ? { stream, data } : data)
  }

  private send(connection: Connection, message: unknown): void {
    if (connection.socket.readyState === connection.socket.OPEN) connection.socket.send(JSON.stringify(message))
  }
}

function klineEvent(symbol: MarketSymbol, interval: Interval, row: KlineRow, now: number, closed: boolean) {
  const [start, o, h, l, c, v, closeTime, q, n, takerBase, takerQuote] = row
  const end = nextBucket(interval, start)
  const first = tradesBefore(symbol, start) + 1
  return {
    e: 'kline',
    E: now,
    s: symbol.info.symbol,
    k: {
      t: start,
      T: closeTime,
      s: symbol.info.symbol,
      i: interval,
      f: n > 0 ? first : -1,
      L: n > 0 ? tradesBefore(symbol, Math.min(end, now + 1)) : -1,
      o,
      c,
      h,
      l,
      v,
      n,
      x: closed,
      q,
      V: takerBase,
      Q: takerQuote,
      B: '0',
    },
  }
}

function markPriceUpdate(symbol: MarketSymbol, now: number) {
  const m = markPrice(symbol, now)
  if (!m) return undefined
  return {
    e: 'markPriceUpdate',
    E: now,
    s: symbol.info.symbol,
    p: m.mark.toFixed(8),
    i: m.index.toFixed(8),
    P: m.estimatedSettle.toFixed(8),
    r: m.fundingRate.toFixed(8),
    T: m.nextFundingTime,
  }
}
