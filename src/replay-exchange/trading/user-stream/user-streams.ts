import crypto from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import { BinanceError } from '../../common/errors.js'
import type { Faults } from '../../common/faults.js'

/** A listenKey lives 60 minutes of replay time unless POST or PUT extends it (Binance's rule). */
export const LISTEN_KEY_TTL_MS = 60 * 60_000

/** How one socket takes a key's events: raw (ws mode) or as `{"stream":<listenKey>,"data":…}` (stream mode), all events or the `events=` it named. */
interface Delivery {
  wrap: boolean
  events: Set<string> | undefined
}

interface ListenKey {
  key: string
  apiKey: string
  expiresAt: number
  sockets: Map<WebSocket, Delivery>
}

export const listenKeyMissing = () => new BinanceError(400, -1125, 'This listenKey does not exist.')

/**
 * The user data streams: one listenKey per account (POST returns the active one and extends it),
 * served on /ws/<listenKey>, /private/ws?listenKey=…[&events=A/B], /private/ws/<listenKey> and
 * /private/stream?listenKey=…[&events=…][&listenKey=…] (Binance's routed private paths of 2026).
 * Events go to every socket of the account's key as JSON text, in the order they happen; the
 * `userEvents` faults drop or delay them. An expired key gets `listenKeyExpired` and then nothing more.
 */
export class UserStreams {
  private readonly byApiKey = new Map<string, ListenKey>()
  private readonly byKey = new Map<string, ListenKey>()

  constructor(
    private readonly replayNow: () => number,
    private readonly faults: Faults,
  ) {}

  /** POST /fapi/v1/listenKey: the account's active key, extended, or a new one. */
  open(apiKey: string): string {
    const now = this.replayNow()
    const active = this.byApiKey.get(apiKey)
    if (active && active.expiresAt > now) {
      active.expiresAt = now + LISTEN_KEY_TTL_MS
      return active.key
    }
    if (active) this.expire(active, now)
    const entry: ListenKey = { key: crypto.randomBytes(48).toString('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 64), apiKey, expiresAt: now + LISTEN_KEY_TTL_MS, sockets: new Map() }
    this.byApiKey.set(apiKey, entry)
    this.byKey.set(entry.key, entry)
    return entry.key
  }

  /** PUT /fapi/v1/listenKey: extends the active key; -1125 when there is none. */
  keepAlive(apiKey: string): string {
    const active = this.active(apiKey)
    if (!active) throw listenKeyMissing()
    active.expiresAt = this.replayNow() + LISTEN_KEY_TTL_MS
    return active.key
  }

  /** DELETE /fapi/v1/listenKey: closes the stream for everyone using it. */
  close(apiKey: string): void {
    const active = this.byApiKey.get(apiKey)
    if (!active) return
    this.forget(active)
    for (const socket of active.sockets.keys()) socket.close(1000, 'listenKey closed')
  }

  /** Whether an account has a live key (so events are worth building). */
  listening(apiKey: string): boolean {
    const active = this.byApiKey.get(apiKey)
    return active !== undefined && active.sockets.size > 0
  }

  /** Sends an event to the account's sockets, unless a fault drops or delays it. */
  emit(apiKey: string, event: Record<string, unknown>): void {
    const active = this.byApiKey.get(apiKey)
    if (!active || active.sockets.size === 0) return
    const fault = this.faults.take(String(event.e), 'userEvents', apiKey)
    if (fault?.userEvents === 'drop') return
    const send = () => deliver(active, event)
    if (fault?.userEvents === 'delay') setTimeout(send, fault.latencyMs ?? 0).unref()
    else send()
  }

  /** Expires keys whose time has come (called on the exchange's timer); returns how many. */
  expireDue(): number {
    const now = this.replayNow()
    let count = 0
    for (const entry of [...this.byKey.values()]) {
      if (entry.expiresAt > now) continue
      this.expire(entry, now)
      count++
    }
    return count
  }

  /** The fault: expire the key(s) now. */
  expireNow(apiKey?: string): number {
    const now = this.replayNow()
    const entries = [...this.byKey.values()].filter((e) => apiKey === undefined || e.apiKey === apiKey)
    for (const entry of entries) this.expire(entry, now)
    return entries.length
  }

  /** The fault: close the sockets (the key stays valid, so a client can reconnect). */
  closeSockets(apiKey?: string): number {
    let count = 0
    for (const entry of this.byKey.values()) {
      if (apiKey !== undefined && entry.apiKey !== apiKey) continue
      for (const socket of entry.sockets.keys()) {
        socket.terminate()
        count++
      }
      entry.sockets.clear()
    }
    return count
  }

  /** Takes a /ws/<name> connection whose name is a live listenKey; false leaves it to the market streams. */
  claim(socket: WebSocket, names: string[]): boolean {
    if (names.length !== 1 || names[0]!.includes('@') || names[0]!.startsWith('!')) return false
    const entry = this.byKey.get(names[0]!)
    if (!entry) return false
    this.attach(socket, entry, { wrap: false, events: undefined })
    return true
  }

  routes(app: FastifyInstance): void {
    const connect = (socket: WebSocket, request: FastifyRequest, wrap: boolean, pathKey?: string) => {
      const subscriptions = pathKey === undefined ? subscriptionsOf(request.url) : [{ key: pathKey, events: eventsOf(new URL(request.url, 'http://x').searchParams.get('events') ?? undefined) }]
      const entries = subscriptions.map((s) => ({ entry: this.byKey.get(s.key), events: s.events }))
      if (entries.length === 0 || entries.some((e) => e.entry === undefined)) {
        socket.close(1008, 'This listenKey does not exist.')
        return
      }
      for (const { entry, events } of entries) this.attach(socket, entry!, { wrap, events })
    }
    app.get('/private/ws', { websocket: true }, (socket, request) => connect(socket, request, false))
    app.get('/private/ws/:listenKey', { websocket: true }, (socket, request) => connect(socket, request, false, (request.params as Record<string, string>).listenKey))
    app.get('/private/stream', { websocket: true }, (socket, request) => connect(socket, request, true))
  }

  shutdown(): void {
    for (const entry of this.byKey.values()) for (const socket of entry.sockets.keys()) socket.terminate()
    this.byKey.clear()
    this.byApiKey.clear()
  }

  private attach(socket: WebSocket, entry: ListenKey, delivery: Delivery): void {
    entry.sockets.set(socket, delivery)
    const drop = () => entry.sockets.delete(socket)
    socket.on('close', drop)
    socket.on('error', drop)
  }

  private active(apiKey: string): ListenKey | undefined {
    const entry = this.byApiKey.get(apiKey)
    return entry && entry.expiresAt > this.replayNow() ? entry : undefined
  }

  /** Sends listenKeyExpired, then forgets the key: "No more user data event will be updated after this event". */
  private expire(entry: ListenKey, now: number): void {
    deliver(entry, { e: 'listenKeyExpired', E: now, listenKey: entry.key })
    this.forget(entry)
  }

  private forget(entry: ListenKey): void {
    this.byKey.delete(entry.key)
    if (this.byApiKey.get(entry.apiKey) === entry) this.byApiKey.delete(entry.apiKey)
  }
}

/** Sends an event to the key's open sockets, each in its mode; `listenKeyExpired` goes to every one whatever `events=` named. */
function deliver(entry: ListenKey, event: Record<string, unknown>): void {
  let raw: string | undefined
  let wrapped: string | undefined
  for (const [socket, delivery] of entry.sockets) {
    if (socket.readyState !== 1) continue
    if (delivery.events && event.e !== 'listenKeyExpired' && !delivery.events.has(String(event.e))) continue
    if (delivery.wrap) socket.send((wrapped ??= JSON.stringify({ stream: entry.key, data: event })))
    else socket.send((raw ??= JSON.stringify(event)))
  }
}

/**
 * The listenKey/events pairs of a private URL's query, in order: each `events=` (names joined by
 * "/") belongs to the listenKey before it, as in Binance's example
 * `?listenKey=<k1>&events=ORDER_TRADE_UPDATE&listenKey=<k2>&events=ACCOUNT_UPDATE`.
 */
function subscriptionsOf(url: string): { key: string; events: Set<string> | undefined }[] {
  const out: { key: string; events: Set<string> | undefined }[] = []
  for (const [name, value] of new URL(url, 'http://x').searchParams) {
    if (name === 'listenKey') out.push({ key: value, events: undefined })
    else if (name === 'events' && out.length > 0) out[out.length - 1]!.events = eventsOf(value)
  }
  return out
}

function eventsOf(value: string | undefined): Set<string> | undefined {
  const names = (value ?? '').split('/').filter((n) => n !== '')
  return names.length > 0 ? new Set(names) : undefined
}
