import type { FastifyBaseLogger } from 'fastify'
import WebSocket from 'ws'
import type { BinanceTradingClient } from '../../trading/binance/trading-client.js'

/** An ORDER_TRADE_UPDATE as a runner reads it (Binance's letters parsed here, at the edge). */
export interface OrderUpdate {
  symbol: string
  clientOrderId: string
  side: string
  /** X: NEW, PARTIALLY_FILLED, FILLED, CANCELED, EXPIRED, … */
  status: string
  /** z: cumulative filled quantity. */
  executedQty: number
  /** ap: average price of the cumulative fills. */
  avgPrice: number
  /** T: transaction time. */
  time: number
  /** i: the exchange's order id. */
  orderId: number
  /** x: execution type (NEW, TRADE, CALCULATED = a liquidation's fill, CANCELED, EXPIRED, …). */
  execution: string
  /** l, L, n, t: this event's fill (quantity, price, commission, trade id); 0 when it is no fill. */
  lastQty: number
  lastPrice: number
  commission: number
  tradeId: number
}

/** An ALGO_UPDATE (a conditional order of the Algo service changed status) as a runner reads it, parsed here. */
export interface AlgoUpdate {
  symbol: string
  /** caid, aid. */
  clientAlgoId: string
  algoId: number
  /** X: NEW, TRIGGERING, TRIGGERED, FINISHED, CANCELED, EXPIRED, REJECTED. */
  status: string
  /** o: STOP_MARKET, TAKE_PROFIT_MARKET, TRAILING_STOP_MARKET, … */
  orderType: string
  side: string
  /** ai: the triggered child's order id in the matching engine ("" before). */
  actualOrderId: string
  /** rm: why the exchange rejected it ("" otherwise). */
  rejectReason: string
  /** E: event time. */
  time: number
}

/** What a runner hears from its account's user data stream. `connected`: after every (re)connect, so it reconciles over REST. */
export type UserStreamEvent =
  | { type: 'order'; update: OrderUpdate }
  | { type: 'algo'; update: AlgoUpdate }
  | { type: 'position'; symbol: string; amount: number }
  | { type: 'connected' }

export type UserStreamListener = (event: UserStreamEvent) => void

/**
 * A listenKey is valid 60 minutes of exchange time unless extended; Binance advises a keep-alive PUT
 * every 30 minutes (research/live-trading.md §1 fact 4, §5.4). Measured in exchange time, so the replay
 * exchange's faster clock is kept alive too.
 */
export const KEEPALIVE_EVERY_MS = 30 * 60_000

interface Account {
  client: BinanceTradingClient
  listeners: Set<UserStreamListener>
  socket: WebSocket | undefined
  listenKey: string | undefined
  /** Exchange time of the last POST or PUT that extended the key (NaN: unknown, extend at the next check). */
  extendedAt: number
  retryMs: number
  timer: NodeJS.Timeout | undefined
}

export interface UserDataStreamsOptions {
  /** The exchange's WebSocket base: the stream is /private/ws?listenKey=… (Binance's private path of 2026, also served by the replay). */
  wsUrl: string
  /** The exchange's clock (GET /fapi/v1/time). */
  exchangeNow: () => Promise<number>
  log: FastifyBaseLogger
}

/**
 * The user data streams of one process: one socket and one listenKey per exchange account, shared by
 * every runner trading on it (Binance keeps one listenKey per account; research §3: a second client's
 * DELETE stops everyone's stream, so a key is never deleted here, only left to expire). Keeps the key
 * alive every 30 minutes of exchange time, and on a closed socket or listenKeyExpired opens a key again
 * (POST returns the active one or a new one), reconnects, and tells its runners to reconcile.
 */
export class UserDataStreams {
  private readonly accounts = new Map<string, Account>()
  private checkTimer: NodeJS.Timeout | undefined
  private checking = false
  private lastCheck: { wall: number; exchange: number } | undefined
  private closed = false

  constructor(private readonly options: UserDataStreamsOptions) {}

  /** Follows the account `accountId` (an exchange key id) with `client`'s credentials; returns the unsubscribe. */
  subscribe(accountId: string, client: BinanceTradingClient, listener: UserStreamListener): () => void {
    let account = this.accounts.get(accountId)
    if (!account) {
      account = { client, listeners: new Set(), socket: undefined, listenKey: undefined, extendedAt: Number.NaN, retryMs: 250, timer: undefined }
      this.accounts.set(accountId, account)
      void this.connect(accountId, account)
      if (this.checkTimer === undefined && !this.checking) this.scheduleCheck(1_000)
    }
    account.listeners.add(listener)
    return () => {
      account.listeners.delete(listener)
      if (account.listeners.size > 0) return
      this.accounts.delete(accountId)
      clearTimeout(account.timer)
      account.socket?.terminate()
      if (this.accounts.size > 0) return
      // Nothing to keep alive: no /fapi/v1/time reads until the next subscriber.
      clearTimeout(this.checkTimer)
      this.checkTimer = undefined
      this.lastCheck = undefined
    }
  }

  close(): void {
    this.closed = true
    clearTimeout(this.checkTimer)
    for (const account of this.accounts.values()) {
      clearTimeout(account.timer)
      account.socket?.terminate()
    }
    this.accounts.clear()
  }

  private async connect(accountId: string, account: Account): Promise<void> {
    if (this.closed || this.accounts.get(accountId) !== account) return
    const opened = await account.client.openListenKey()
    if (opened.kind !== 'ok') {
      // A refused key is the runners' to report (their REST calls meet it too); keep trying meanwhile.
      this.options.log.warn({ exchange_key_id: accountId, answer: opened.kind }, 'user data stream: could not open a listenKey')
      this.retry(accountId, account)
      return
    }
    account.listenKey = opened.value.listenKey
    account.extendedAt = await this.options.exchangeNow().catch(() => Number.NaN)
    if (this.closed || this.accounts.get(accountId) !== account) return
    const socket = new WebSocket(`${this.options.wsUrl}/private/ws?listenKey=${encodeURIComponent(account.listenKey)}`)
    account.socket = socket
    socket.on('open', () => {
      account.retryMs = 250
      for (const listener of account.listeners) listener({ type: 'connected' })
    })
    socket.on('message', (data) => {
      const event = parseUserEvent(String(data))
      if (event === 'expired') socket.terminate()
      else for (const e of event) for (const listener of account.listeners) listener(e)
    })
    socket.on('error', () => {})
    socket.on('close', () => {
      if (account.socket === socket) this.retry(accountId, account)
    })
  }

  private retry(accountId: string, account: Account): void {
    if (this.closed || this.accounts.get(accountId) !== account) return
    account.socket = undefined
    clearTimeout(account.timer)
    account.timer = setTimeout(() => void this.connect(accountId, account), account.retryMs)
    account.retryMs = Math.min(5_000, account.retryMs * 2)
  }

  /**
   * Keeps every account's key alive: PUT once 30 minutes of exchange time passed since it was last
   * extended. Checks three times per period at the exchange's pace, measured between checks (the replay
   * exchange runs up to hundreds of times faster than the wall clock), at least every second, at most every minute.
   */
  private async check(): Promise<void> {
    this.checkTimer = undefined
    this.checking = true
    let rate = Number.NaN
    try {
      const exchange = await this.options.exchangeNow()
      const wall = performance.now()
      if (this.lastCheck) rate = Math.max(1, (exchange - this.lastCheck.exchange) / Math.max(1, wall - this.lastCheck.wall))
      this.lastCheck = { wall, exchange }
      for (const [accountId, account] of this.accounts) {
        if (account.listenKey === undefined || !(account.socket?.readyState === WebSocket.OPEN)) continue
        if (exchange - account.extendedAt < KEEPALIVE_EVERY_MS) continue
        const kept = await account.client.keepAliveListenKey()
        if (kept.kind === 'ok') account.extendedAt = exchange
        // -1125: the key expired meanwhile; the socket is closed so connect() opens a new one.
        else if (kept.kind === 'rejected') account.socket?.terminate()
        else this.options.log.warn({ exchange_key_id: accountId, answer: kept.kind }, 'user data stream: keep-alive failed; trying again at the next check')
      }
    } catch (error) {
      this.options.log.warn({ err: error }, 'user data stream: could not read the exchange time')
    } finally {
      this.checking = false
    }
    if (this.closed || this.accounts.size === 0) return
    // NaN (no pace measured yet): check again in a second.
    this.scheduleCheck(rate === rate ? Math.min(60_000, Math.max(1_000, KEEPALIVE_EVERY_MS / 3 / rate)) : 1_000)
  }

  private scheduleCheck(ms: number): void {
    clearTimeout(this.checkTimer)
    this.checkTimer = setTimeout(() => void this.check(), ms)
  }
}

/** The events of one message (a /private/stream wrapper is unwrapped); 'expired' for listenKeyExpired. */
function parseUserEvent(text: string): UserStreamEvent[] | 'expired' {
  let message: Record<string, unknown>
  try {
    message = JSON.parse(text) as Record<string, unknown>
  } catch {
    return []
  }
  const event = (typeof message.data === 'object' && message.data !== null ? message.data : message) as Record<string, unknown>
  if (event.e === 'listenKeyExpired') return 'expired'
  if (event.e === 'ORDER_TRADE_UPDATE') {
    const o = event.o as Record<string, unknown> | undefined
    if (!o) return []
    const update: OrderUpdate = {
      symbol: String(o.s),
      clientOrderId: String(o.c),
      side: String(o.S),
      status: String(o.X),
      executedQty: Number(o.z),
      avgPrice: Number(o.ap),
      time: Number(o.T),
      orderId: Number(o.i),
      execution: String(o.x),
      lastQty: Number(o.l ?? 0),
      lastPrice: Number(o.L ?? 0),
      // "will not push if no commission"
      commission: Number(o.n ?? 0),
      tradeId: Number(o.t ?? 0),
    }
    return [{ type: 'order', update }]
  }
  if (event.e === 'ALGO_UPDATE') {
    const o = event.o as Record<string, unknown> | undefined
    if (!o) return []
    const update: AlgoUpdate = {
      symbol: String(o.s),
      clientAlgoId: String(o.caid),
      algoId: Number(o.aid),
      status: String(o.X),
      orderType: String(o.o),
      side: String(o.S),
      actualOrderId: String(o.ai ?? ''),
      rejectReason: String(o.rm ?? ''),
      time: Number(event.E),
    }
    return [{ type: 'algo', update }]
  }
  if (event.e === 'ACCOUNT_UPDATE') {
    const rows = ((event.a as { P?: unknown[] } | undefined)?.P ?? []) as { s?: unknown; pa?: unknown; ps?: unknown }[]
    return rows.filter((p) => p.ps === undefined || p.ps === 'BOTH').map((p) => ({ type: 'position' as const, symbol: String(p.s), amount: Number(p.pa) }))
  }
  return []
}
