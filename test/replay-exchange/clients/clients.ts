import ccxt from 'ccxt'
import { USDMClient, WebsocketClient } from 'binance'
import type { ReplayExchange } from '../../../src/replay-exchange/index.js'

export interface ClientKeys {
  apiKey: string
  secretKey: string
}

/**
 * ccxt's binanceusdm (with ccxt.pro's streams) as a user runs it, with only its base URLs moved
 * from Binance's hosts to the replay exchange: keys set, clock sync on, everything else default.
 */
export async function binanceusdm(replay: ReplayExchange, keys: ClientKeys) {
  const exchange = new ccxt.pro.binanceusdm({ apiKey: keys.apiKey, secret: keys.secretKey, options: { adjustForTimeDifference: true } })
  const api = exchange.urls['api'] as Record<string, unknown> & { ws: Record<string, unknown> }
  for (const [name, url] of Object.entries(api)) if (typeof url === 'string') api[name] = url.replace(/^https:\/\/[^/]+/, replay.url)
  for (const [name, url] of Object.entries(api.ws)) if (typeof url === 'string') api.ws[name] = url.replace(/^wss:\/\/[^/]+/, replay.wsUrl)
  // ccxt refuses plain ws:// until this agent is loaded (Exchange.getHttpAgentIfNeeded); the replay serves no TLS.
  await exchange.loadHttpProxyAgent()
  // ccxt.pro schedules its listenKey keep-alive (every 20 min) with a plain setTimeout that close()
  // does not clear; unref it so the test process can exit. The keep-alive itself is unchanged.
  exchange.delay = (timeout: number, method: any, ...args: any[]) => {
    setTimeout(() => exchange.spawn(method, ...args), timeout).unref()
  }
  return exchange
}

export type Ccxt = Awaited<ReturnType<typeof binanceusdm>>

/**
 * The package's time sync starts an hourly setInterval in the USDMClient constructor and keeps no
 * handle to it; unref it so the test process can exit. The client itself is unchanged.
 */
export function unrefIntervals<T>(make: () => T): T {
  const restore = unrefIntervalsFromNow()
  try {
    return make()
  } finally {
    restore()
  }
}

/**
 * Unrefs every setInterval started until the returned function is called. The WebsocketClient
 * starts its 50-minute listenKey keep-alive whenever it (re)subscribes, also on its own after a
 * listenKey expires, and neither unsubscribing nor closeAll clears the respawned one.
 */
export function unrefIntervalsFromNow(): () => void {
  const original = globalThis.setInterval
  globalThis.setInterval = ((...args: Parameters<typeof setInterval>) => original(...args).unref()) as typeof setInterval
  return () => {
    globalThis.setInterval = original
  }
}

/** The `binance` package's REST client: only the base URL differs from production; time sync on (off by default in the package). */
export function usdmClient(replay: ReplayExchange, keys: ClientKeys): USDMClient {
  return unrefIntervals(() => new USDMClient({ api_key: keys.apiKey, api_secret: keys.secretKey, baseUrl: replay.url, disableTimeSync: false }))
}

/** The `binance` package's WebsocketClient: only the stream and REST base URLs differ from production. */
export function usdmWebsocket(replay: ReplayExchange, keys: ClientKeys): WebsocketClient {
  return new WebsocketClient({ api_key: keys.apiKey, api_secret: keys.secretKey, wsUrl: replay.wsUrl, restOptions: { baseUrl: replay.url } })
}

/**
 * The price a MARKET order placed at replay time `time` fills at by the fill model: the latest
 * trade at or before that moment, read from the public /fapi/v1/aggTrades (independently of the
 * trading wing).
 */
export async function marketFillPrice(replay: ReplayExchange, symbol: string, time: number): Promise<number> {
  const rows = (await (await fetch(`${replay.url}/fapi/v1/aggTrades?symbol=${symbol}&startTime=${time - 10_000}&endTime=${time}&limit=1000`)).json()) as { p: string; T: number }[]
  const last = rows[rows.length - 1]
  if (!last) throw new Error(`no trade of ${symbol} in the 10 s before ${time}`)
  return Number(last.p)
}

/** Binance VIP 0 fees on a fill's notional, to Binance's 8 decimals. */
export const takerFee = (qty: number, price: number) => round8(qty * price * 0.0005)
export const makerFee = (qty: number, price: number) => round8(qty * price * 0.0002)
export const round8 = (value: number) => Math.round(value * 1e8) / 1e8

/** A rejection's error, or a failure when the call succeeded. */
export async function rejection(call: Promise<unknown>): Promise<Error & { code?: number; body?: { code: number; msg: string } }> {
  try {
    await call
  } catch (error) {
    return error as Error
  }
  throw new Error('expected the call to fail')
}

/**
 * Awaits a ccxt.pro watch promise that was started before the action that triggers it, failing
 * after `timeoutMs` (ccxt resolves a watch on the next message only, so it must be pending first).
 */
export async function within<T>(what: string, timeoutMs: number, pending: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)), timeoutMs)
  })
  try {
    return await Promise.race([pending, deadline])
  } finally {
    clearTimeout(timer)
  }
}
