import crypto from 'node:crypto'
import WebSocket from 'ws'
import { type ReplayExchangeOptions } from '../../../src/replay-exchange/index.js'
import { poll, startTestExchange, type TestExchange } from '../support.js'

export interface Keys {
  apiKey: string
  secretKey: string
}

let counter = 0
/** A fresh account's keys (each test its own account, so state never leaks between tests). */
export function newKeys(): Keys {
  counter++
  return { apiKey: `trader${counter}${crypto.randomBytes(12).toString('hex')}`, secretKey: crypto.randomBytes(24).toString('hex') }
}

export interface Answer<T = any> {
  status: number
  headers: Headers
  body: T
}

/** The test's own signer: HMAC-SHA256 over query string + body, as Binance documents it. */
export function sign(secret: string, totalParams: string): string {
  return crypto.createHmac('sha256', secret).update(totalParams).digest('hex')
}

export interface TradingExchange extends TestExchange {
  /** Creates an account over the control route. */
  account(balances?: Record<string, string>): Promise<Keys>
  /** A signed request; `inBody` sends the parameters as a form body (POST/DELETE). */
  call<T = any>(keys: Keys, method: string, path: string, params?: Record<string, string | number | boolean>, options?: { inBody?: boolean; timestamp?: number; signal?: AbortSignal }): Promise<Answer<T>>
  /** Replay now (ms), from /fapi/v1/time. */
  replayNow(): Promise<number>
}

export async function startTradingExchange(options: ReplayExchangeOptions = {}): Promise<TradingExchange> {
  const t = await startTestExchange(options)
  const call = async (keys: Keys, method: string, path: string, params: Record<string, string | number | boolean> = {}, opts: { inBody?: boolean; timestamp?: number; signal?: AbortSignal } = {}) => {
    const query = new URLSearchParams(Object.entries({ ...params, timestamp: opts.timestamp ?? t.clock.now() }).map(([k, v]): [string, string] => [k, String(v)])).toString()
    const signed = `${query}&signature=${sign(keys.secretKey, query)}`
    const response = await fetch(`${t.exchange.url}${path}${opts.inBody ? '' : `?${signed}`}`, {
      method,
      headers: { 'x-mbx-apikey': keys.apiKey, ...(opts.inBody ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(opts.inBody ? { body: signed } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    })
    const text = await response.text()
    return { status: response.status, headers: response.headers, body: text === '' ? undefined : JSON.parse(text) }
  }
  return {
    ...t,
    call,
    async account(balances = { USDT: '10000' }) {
      const keys = newKeys()
      const response = await fetch(`${t.exchange.url}/__replay/accounts`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...keys, balances }),
      })
      if (response.status !== 201) throw new Error(`account: ${response.status} ${await response.text()}`)
      return keys
    },
    async replayNow() {
      return (await t.get<{ serverTime: number }>('/fapi/v1/time')).body.serverTime
    },
  }
}

/** A user data stream socket collecting its events. */
export interface UserStream {
  events: any[]
  next(what: string, match: (event: any) => boolean): Promise<any>
  close(): void
}

export async function openUserStream(t: TradingExchange, keys: Keys, path = (key: string) => `/ws/${key}`): Promise<UserStream> {
  const key = (await fetch(`${t.exchange.url}/fapi/v1/listenKey`, { method: 'POST', headers: { 'x-mbx-apikey': keys.apiKey } }).then((r) => r.json())) as { listenKey: string }
  const socket = new WebSocket(`${t.exchange.wsUrl}${path(key.listenKey)}`)
  const events: any[] = []
  socket.on('message', (data) => events.push(JSON.parse(String(data))))
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  return {
    events,
    next: (what, match) => poll(what, 5000, () => events.find(match)),
    close: () => socket.close(),
  }
}

export { poll }
