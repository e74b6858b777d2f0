import { PerpetuaError } from './errors.js'
import type { StreamMessage } from './operations.js'
import type { ApiClient, WebSocketConstructor, WebSocketLike } from './api-client.js'

export interface StreamOptions {
  /** Every message: status (first after each connect), order, position_opened, position_closed, error. */
  onMessage: (message: StreamMessage) => void
  /** The socket is open (again); `reconnects` counts the connections before this one. */
  onOpen?: (info: { reconnects: number }) => void
  /** The connection dropped and will be retried after `delayMs`. */
  onReconnecting?: (info: { delayMs: number; attempt: number; reason: string }) => void
  /** The stream ended for good: close() was called (no error), or the API refused it (a PerpetuaError). */
  onEnd?: (error?: Error) => void
  /** First reconnect delay, ms (default 500), doubling up to maxReconnectDelayMs (default 30 000). */
  reconnectDelayMs?: number
  maxReconnectDelayMs?: number
}

/** A followed status stream; close() ends it. `ended` settles when it stops for good. */
export interface StrategyStream {
  close(): void
  readonly ended: Promise<void>
}

/** 4xx answers that will not change by retrying (the strategy is gone, the key lacks the scope…). */
const PERMANENT = new Set([400, 401, 403, 404])

/**
 * Follows GET /v1/strategies/{id}/stream. Each connection opens with a one-time ticket (POST
 * …/stream-ticket), the one way that works in browsers too, which cannot set headers on a WebSocket.
 * When the socket drops, it reconnects with a fresh ticket after a growing delay; the first message of
 * every connection is the current status, so a reconnect never leaves the caller with a stale picture
 * (messages sent while disconnected are not replayed: GET …/orders and …/trades hold them).
 */
export function followStrategy(client: ApiClient, id: string, options: StreamOptions): StrategyStream {
  const firstDelay = options.reconnectDelayMs ?? 500
  const maxDelay = Math.max(firstDelay, options.maxReconnectDelayMs ?? 30_000)
  const stop = new AbortController()
  let socket: WebSocketLike | undefined
  let connections = 0

  const connectOnce = async (Socket: WebSocketConstructor): Promise<string> => {
    const { ticket } = await client.post('/v1/strategies/{id}/stream-ticket', { path: { id }, signal: stop.signal })
    const url = new URL(`${client.baseUrl}/v1/strategies/${encodeURIComponent(id)}/stream`)
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:'
    url.searchParams.set('ticket', ticket)
    return new Promise<string>((resolve) => {
      const ws = new Socket(url.toString())
      socket = ws
      let opened = false
      ws.onopen = () => {
        opened = true
        options.onOpen?.({ reconnects: connections++ })
      }
      ws.onmessage = (event) => {
        const text = typeof event.data === 'string' ? event.data : new TextDecoder().decode(event.data as ArrayBuffer)
        options.onMessage(JSON.parse(text) as StreamMessage)
      }
      ws.onerror = () => undefined // onclose follows with the reason
      ws.onclose = (event) => resolve(opened ? `closed (${event.code}${event.reason ? ` ${event.reason}` : ''})` : 'could not connect')
    })
  }

  const ended = (async () => {
    const Socket = client.WebSocket ?? (await defaultWebSocket())
    let delay = firstDelay
    for (let attempt = 1; !stop.signal.aborted; attempt++) {
      let reason: string
      try {
        const before = connections
        reason = await connectOnce(Socket)
        if (connections > before) {
          delay = firstDelay // it was open: start the back-off afresh
          attempt = 1
        }
      } catch (error) {
        if (stop.signal.aborted) break
        if (error instanceof PerpetuaError && PERMANENT.has(error.status)) throw error
        reason = error instanceof Error ? error.message : String(error)
        if (error instanceof PerpetuaError && error.retryAfterMs !== undefined) delay = Math.max(delay, error.retryAfterMs)
      }
      if (stop.signal.aborted) break
      options.onReconnecting?.({ delayMs: delay, attempt, reason })
      await client.sleep(delay, stop.signal).catch(() => undefined)
      delay = Math.min(maxDelay, delay * 2)
    }
  })().then(
    () => options.onEnd?.(),
    (error: Error) => {
      options.onEnd?.(error)
      throw error
    },
  )
  ended.catch(() => undefined) // reported through onEnd; awaiting `ended` still sees it

  return {
    close() {
      stop.abort()
      socket?.close(1000, 'closed by the client')
    },
    ended,
  }
}

/** globalThis.WebSocket (browsers, Node ≥ 22), else the `ws` package (Node 20), loaded only when needed. */
async function defaultWebSocket(): Promise<WebSocketConstructor> {
  const native = (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket
  if (native) return native
  const name = 'ws' // a variable, so browser bundlers do not try to include the Node package
  const module = (await import(/* @vite-ignore */ name)) as { default?: WebSocketConstructor; WebSocket?: WebSocketConstructor }
  const Socket = module.WebSocket ?? module.default
  if (!Socket) throw new Error('no WebSocket available: install the `ws` package or pass options.WebSocket')
  return Socket
}
