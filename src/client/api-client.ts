import { errorFromResponse, PerpetuaError } from './errors.js'
import type { CallArgs, CallOptions, Method, Operation, PathsWith, SuccessBody } from './operations.js'
import { type Page, paginate } from './pagination.js'
import { type HmacKey, hmacKey, signRequest } from './signing.js'

export interface PerpetuaClientOptions {
  /** Where Perpetua answers, e.g. http://127.0.0.1:8080. */
  baseUrl: string
  /** API key id (pk_…) and secret: every /v1 request is signed with them. */
  apiKey?: string
  apiSecret?: string
  /** An app token (from POST /auth/mobile/idpa|idpb), sent as Authorization: Bearer; instead of a key. */
  token?: string
  /** fetch to use; default globalThis.fetch. */
  fetch?: typeof globalThis.fetch
  /** The clock for signature timestamps (Unix ms); default Date.now. */
  now?: () => number
  /** How waits are made (polling, reconnects); default a timer. Tests inject one that records the waits. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
  /** WebSocket constructor for streams; default globalThis.WebSocket, else the `ws` package in Node. */
  WebSocket?: WebSocketConstructor
}

/** The part of the WebSocket API the stream uses (browsers' and the `ws` package's alike). */
export type WebSocketConstructor = new (url: string) => WebSocketLike
export interface WebSocketLike {
  readonly readyState: number
  onopen: ((event: unknown) => void) | null
  onmessage: ((event: { data: unknown }) => void) | null
  onclose: ((event: { code: number; reason: string }) => void) | null
  onerror: ((event: unknown) => void) | null
  close(code?: number, reason?: string): void
}

/**
 * The signed HTTP calls beneath every wing of PerpetuaClient (backtests, strategies, …): a wing takes
 * this, not the client that holds it, so the wings and the client do not import each other.
 */
export class ApiClient {
  readonly baseUrl: string
  readonly now: () => number
  readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>
  readonly WebSocket: WebSocketConstructor | undefined
  private readonly fetchImpl: typeof globalThis.fetch
  private readonly credentials: PerpetuaClientOptions
  private signingKey: Promise<HmacKey> | undefined

  constructor(options: PerpetuaClientOptions) {
    if (!/^https?:\/\//.test(options.baseUrl)) throw new TypeError(`baseUrl must be an http(s) URL, not ${JSON.stringify(options.baseUrl)}`)
    if ((options.apiKey === undefined) !== (options.apiSecret === undefined)) throw new TypeError('apiKey and apiSecret go together')
    if (options.token !== undefined && options.apiKey !== undefined) throw new TypeError('give either apiKey/apiSecret or token, not both')
    this.baseUrl = options.baseUrl.replace(/\/+$/, '')
    this.credentials = options
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis)
    this.now = options.now ?? Date.now
    this.sleep = options.sleep ?? defaultSleep
    this.WebSocket = options.WebSocket
  }

  /** Calls one operation: `request('get', '/v1/backtest/jobs/{id}', { path: { id } })`. */
  async request<M extends Method, P extends PathsWith<M>>(method: M, path: P, ...[options]: CallArgs<Operation<P, M>>): Promise<SuccessBody<Operation<P, M>>> {
    const response = await this.send(method, path, (options ?? {}) as CallOptions<Operation<P, M>>)
    if (response.status === 204) return undefined as SuccessBody<Operation<P, M>>
    const type = response.headers.get('content-type') ?? ''
    return (type.includes('json') ? await response.json() : await response.text()) as SuccessBody<Operation<P, M>>
  }

  get<P extends PathsWith<'get'>>(path: P, ...args: CallArgs<Operation<P, 'get'>>) {
    return this.request('get', path, ...args)
  }
  post<P extends PathsWith<'post'>>(path: P, ...args: CallArgs<Operation<P, 'post'>>) {
    return this.request('post', path, ...args)
  }
  put<P extends PathsWith<'put'>>(path: P, ...args: CallArgs<Operation<P, 'put'>>) {
    return this.request('put', path, ...args)
  }
  patch<P extends PathsWith<'patch'>>(path: P, ...args: CallArgs<Operation<P, 'patch'>>) {
    return this.request('patch', path, ...args)
  }
  delete<P extends PathsWith<'delete'>>(path: P, ...args: CallArgs<Operation<P, 'delete'>>) {
    return this.request('delete', path, ...args)
  }

  /**
   * Every item of a cursor-paged list (`{data, next_cursor}`), page after page until next_cursor is
   * null: `for await (const job of client.iterate('/v1/backtest/jobs', { query: { status: 'done' } }))`.
   */
  iterate<P extends PagedPath>(path: P, ...[options]: CallArgs<Operation<P, 'get'>>): AsyncGenerator<PageItem<P>> {
    const base = (options ?? {}) as { query?: Record<string, unknown> }
    return paginate((cursor) => {
      const query = { ...base.query, ...(cursor === undefined ? {} : { cursor }) }
      return this.request('get', path, ...([{ ...base, query }] as unknown as CallArgs<Operation<P, 'get'>>)) as Promise<Page<PageItem<P>>>
    })
  }

  /** The raw Response of a call, after signing; non-2xx answers throw PerpetuaError. */
  async send(method: Method, path: string, options: { path?: object; query?: object; body?: unknown; signal?: AbortSignal; headers?: Record<string, string> }): Promise<Response> {
    const url = new URL(this.baseUrl + fillPath(path, options.path) + queryString(options.query))
    const body = options.body === undefined ? undefined : JSON.stringify(options.body)
    const headers: Record<string, string> = { accept: 'application/json', ...options.headers }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (url.pathname.startsWith('/v1/')) Object.assign(headers, await this.authHeaders(method, url.pathname + url.search, body ?? ''))
    let response: Response
    try {
      response = await this.fetchImpl(url, { method: method.toUpperCase(), headers, ...(body === undefined ? {} : { body }), ...(options.signal ? { signal: options.signal } : {}) })
    } catch (cause) {
      if (options.signal?.aborted) throw cause
      throw new PerpetuaError({ status: 0, code: 'NETWORK_ERROR', message: `cannot reach ${this.baseUrl}: ${(cause as Error).message ?? String(cause)}`, cause })
    }
    if (!response.ok) throw await errorFromResponse(response)
    return response
  }

  /** The credentials of one request: Bearer, or the three signing headers over exactly what is sent. */
  async authHeaders(method: string, pathWithQuery: string, body: string): Promise<Record<string, string>> {
    const { apiKey, apiSecret, token } = this.credentials
    if (token !== undefined) return { authorization: `Bearer ${token}` }
    if (apiKey === undefined || apiSecret === undefined) return {}
    this.signingKey ??= hmacKey(apiSecret)
    // Strictly increasing per key: the server refuses a signature it has already seen (replay), so two
    // identical requests within one millisecond, even from two clients of one key, must still differ.
    const next = Math.max(this.now(), (lastTimestamps.get(apiKey) ?? 0) + 1)
    lastTimestamps.set(apiKey, next)
    const timestamp = String(next)
    const signature = await signRequest(await this.signingKey, timestamp, method, pathWithQuery, body)
    return { 'x-service-api-key': apiKey, 'x-service-timestamp': timestamp, 'x-service-signature': signature }
  }
}

/** The last timestamp signed with each key in this process (see authHeaders). */
const lastTimestamps = new Map<string, number>()

type PagedPath = { [P in PathsWith<'get'>]: SuccessBody<Operation<P, 'get'>> extends { data: unknown[]; next_cursor: string | null } ? P : never }[PathsWith<'get'>]
type PageItem<P extends PathsWith<'get'>> = SuccessBody<Operation<P, 'get'>> extends { data: (infer T)[] } ? T : never

function fillPath(template: string, values: object | undefined): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = (values as Record<string, unknown> | undefined)?.[name]
    if (value === undefined || value === null || value === '') throw new TypeError(`path parameter ${name} is missing for ${template}`)
    return encodeURIComponent(String(value))
  })
}

function queryString(query: object | undefined): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value === undefined || value === null) continue
    for (const item of Array.isArray(value) ? value : [value]) search.append(name, String(item))
  }
  const text = search.toString()
  return text === '' ? '' : `?${text}`
}

function defaultSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}
