import crypto from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import { BinanceError } from '../../common/errors.js'
import type { Faults } from '../../common/faults.js'

/** A listenKey lives 60 minutes of replay time unless POST or PUT extends it (Binance's rule). */
export const LISTEN_KEY_TTL_MS = 60 * 60_000

interface ListenKey {
  key: string
  apiKey: string
  expiresAt: number
  sockets: Set<WebSocket>
}

export const listenKeyMissing = () => new BinanceError(400, -1125, 'This listenKey does not exist.')

/**
 * The user data streams: one listenKey per account (POST returns the active one and extends it),
 * served on /ws/<listenKey>, /private/ws?listenKey=… and /private/ws/<listenKey>. Events go to
 * every socket of the account's key as JSON text, in the order they happen; the `userEvents`
 * faults drop or delay them. An expired key gets `listenKeyExpired` and then nothing more.
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
    const entry: ListenKey = { key: crypto.randomBytes(48).toString('base64').replace(/[^A-Za-z0-9]/g, '').slice(0, 64), apiKey, expiresAt: now + LISTEN_KEY_TTL_MS, sockets: new Set() }
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
    for (const socket of active.sockets) socket.close(1000, 'listenKey closed')
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
    const fault = this.faults.take(String(event.e), 'userEvents')
    if (fault?.userEvents === 'drop') return
    const text = JSON.stringify(event)
    const send = () => {
      for (const socket of active.sockets) if (socket.readyState === 1) socket.send(text)
    }
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
      for (const socket of entry.sockets) {
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
    this.attach(socket, entry)
    return true
  }

  routes(app: FastifyInstance): void {
    const connect = (socket: WebSocket, key: string | undefined) => {
      const entry = key === undefined ? undefined : this.byKey.get(key)
      if (!entry) {
        socket.close(1008, 'This listenKey does not exist.')
        return
      }
      this.attach(socket, entry)
    }
    app.get('/private/ws', { websocket: true }, (socket, request: FastifyRequest) => {
      const key = (request.query as Record<string, unknown>).listenKey
      connect(socket, typeof key === 'string' ? key : undefined)
    })
    app.get('/private/ws/:listenKey', { websocket: true }, (socket, request: FastifyRequest) => {
      connect(socket, (request.params as Record<string, string>).listenKey)
    })
  }

  shutdown(): void {
    for (const entry of this.byKey.values()) for (const socket of entry.sockets) socket.terminate()
    this.byKey.clear()
    this.byApiKey.clear()
  }

  private attach(socket: WebSocket, entry: ListenKey): void {
    entry.sockets.add(socket)
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
    const text = JSON.stringify({ e: 'listenKeyExpired', E: now, listenKey: entry.key })
    for (const socket of entry.sockets) if (socket.readyState === 1) socket.send(text)
    this.forget(entry)
  }

  private forget(entry: ListenKey): void {
    this.byKey.delete(entry.key)
    if (this.byApiKey.get(entry.apiKey) === entry) this.byApiKey.delete(entry.apiKey)
  }
}
