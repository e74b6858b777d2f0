import WebSocket from 'ws'
import type { ClosedBar } from '../brokers/broker.js'

/**
 * `receivedAt` is performance.now() when the message reached this process, before it is parsed: where
 * the bar-to-order latency starts (bench/live.ts).
 */
export type KlineListener = (event: { type: 'closed'; bar: ClosedBar; receivedAt: number } | { type: 'reconnected' }) => void

interface Feed {
  socket: WebSocket | undefined
  listeners: Set<KlineListener>
  connectedOnce: boolean
  retryMs: number
  timer: NodeJS.Timeout | undefined
}

/**
 * One kline stream per (symbol, interval) in a process, shared by every runner that follows it
 * (`<symbol>@kline_<interval>` on /ws/<stream>, Binance's raw stream path). Reconnects with backoff;
 * listeners hear "reconnected" so they backfill the bars they missed before acting again.
 */
export class KlineStreams {
  private readonly feeds = new Map<string, Feed>()
  private closed = false

  constructor(private readonly wsUrl: string) {}

  subscribe(symbol: string, interval: string, listener: KlineListener): () => void {
    const name = `${symbol.toLowerCase()}@kline_${interval}`
    let feed = this.feeds.get(name)
    if (!feed) {
      feed = { socket: undefined, listeners: new Set(), connectedOnce: false, retryMs: 250, timer: undefined }
      this.feeds.set(name, feed)
      this.connect(name, feed)
    }
    feed.listeners.add(listener)
    return () => {
      feed.listeners.delete(listener)
      if (feed.listeners.size === 0) {
        this.feeds.delete(name)
        clearTimeout(feed.timer)
        feed.socket?.terminate()
      }
    }
  }

  close(): void {
    this.closed = true
    for (const feed of this.feeds.values()) {
      clearTimeout(feed.timer)
      feed.socket?.terminate()
    }
    this.feeds.clear()
  }

  private connect(name: string, feed: Feed): void {
    // Binance's routed market path of 2026 (the legacy /ws/<stream> was retired on 2026-04-23; research/live-trading.md §1.1).
    const socket = new WebSocket(`${this.wsUrl}/market/ws/${name}`)
    feed.socket = socket
    socket.on('open', () => {
      feed.retryMs = 250
      if (feed.connectedOnce) for (const listener of feed.listeners) listener({ type: 'reconnected' })
      feed.connectedOnce = true
    })
    socket.on('message', (data) => {
      const receivedAt = performance.now()
      const bar = parseClosedKline(String(data))
      if (bar) for (const listener of feed.listeners) listener({ type: 'closed', bar, receivedAt })
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      if (this.closed || this.feeds.get(name) !== feed) return
      feed.timer = setTimeout(() => this.connect(name, feed), feed.retryMs)
      feed.retryMs = Math.min(5_000, feed.retryMs * 2)
    })
  }
}

/** A closed kline from a stream message (x: true), else undefined: runners act on closed bars only. */
function parseClosedKline(text: string): ClosedBar | undefined {
  let message: { k?: { t: number; o: string; h: string; l: string; c: string; v: string; q: string; n: number; x: boolean } }
  try {
    message = JSON.parse(text)
  } catch {
    return undefined
  }
  const k = message.k
  if (!k || k.x !== true) return undefined
  return { openTime: Number(k.t), open: Number(k.o), high: Number(k.h), low: Number(k.l), close: Number(k.c), volume: Number(k.v), quoteVolume: Number(k.q), trades: Number(k.n) }
}
