import { setTimeout as sleep } from 'node:timers/promises'
import { Pool } from 'undici'
import { AppError } from '../http/errors.js'
import { RequestWindow, WeightBudget } from './upstream-budget.js'
import { metrics } from '../ops/registry.js'

/** `api` is UPSTREAM_URL (/fapi/...), `data` is UPSTREAM_DATA_URL (/futures/data/...). */
export type UpstreamHost = 'api' | 'data'

export interface UpstreamCall {
  host: UpstreamHost
  path: string
  /** Canonical query string without `?` (see canonicalQuery). */
  query: string
  /** The exchange's request weight for this call. */
  weight: number
  /** Extra request headers, e.g. X-MBX-APIKEY of a SIGNED call. */
  headers?: Record<string, string>
}

export interface UpstreamResponse {
  status: number
  body: string
}

export interface UpstreamClientOptions {
  apiUrl: string | undefined
  dataUrl: string | undefined
  now: () => number
  /** The exchange's weight limit per minute (Binance USD-M: 2400). */
  weightLimit?: number
  /** The exchange's request limit on /futures/data per 5 minutes (Binance: 1000). */
  dataRequestLimit?: number
  /** Share of each limit kept unused (default 0.1). */
  margin?: number
  connectTimeoutMs?: number
  /**
   * The loopback address requests leave from (tests: a second trader's reads, e.g. 127.0.0.2, spend their own
   * per-IP weight on the replay exchange rather than the nodes' under test).
   */
  localAddress?: string
  /** Per attempt: time to the response headers, and between body chunks. */
  responseTimeoutMs?: number
}

/** Retry-After when a 429 or 418 comes without one (Binance always sends it; a look-alike may not). */
const DEFAULT_BACKOFF_S = { 429: 60, 418: 300 } as const
const RETRY_DELAYS_MS = [50, 150]
/**
 * The share of each budget only calls without a fallback may use: refreshing an answer we still hold
 * stops at 75% of the limit (1800 of 2400), so a request for data we have never fetched still finds
 * room after a minute of heavy polling.
 */
const REFRESH_KEEP = 0.15
/** Node and undici codes that mean the request never got an answer: safe to send a GET again. */
const CONNECTION_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT'])

/** One origin (scheme://host:port) and its budget; api and data share one when their URLs share an origin. */
interface Origin {
  pool: Pool
  weight: WeightBudget
  dataRequests: RequestWindow
  /** Clock time before which nothing is sent (Retry-After of a 429 or 418). */
  blockedUntil: number
}

/** Where one host's calls go: its origin's pool and budget, and a path prefix of its own. */
interface Target {
  origin: Origin
  prefix: string
  base: string
}

/** Binance USD-M's request weight per minute per IP. */
const WEIGHT_LIMIT = 2400

/**
 * One upstream answer (or 'error': none) in perpetua_upstream_requests_total, by endpoint class: the path after its
 * API prefix (`klines`, `order`, `topLongShortAccountRatio`), from our own constants, never a query; anything else
 * is `other` so the label stays bounded. The weight the exchange reports is the gauge's latest value.
 */
function countRequest(path: string, status: number | 'error', usedWeight: number | undefined): void {
  const name = path.replace(/^\/(fapi\/v\d+|futures\/data|api\/v\d+)\//, '')
  metrics.upstreamRequests.inc({ class: /^[A-Za-z][A-Za-z/]{0,40}$/.test(name) ? name : 'other', status: String(status) })
  if (usedWeight !== undefined) metrics.upstreamWeightUsed.set(usedWeight)
}

/** The exchange over HTTP: timeouts, retries of connection failures, and the exchange's rate limits kept. */
export class UpstreamClient {
  private readonly origins = new Map<string, Origin>()
  private readonly byHost: Record<UpstreamHost, Target | undefined>
  private readonly now: () => number

  constructor(options: UpstreamClientOptions) {
    this.now = options.now
    metrics.upstreamWeightLimit.set(options.weightLimit ?? WEIGHT_LIMIT)
    const dataUrl = options.dataUrl ?? options.apiUrl
    this.byHost = { api: this.targetFor(options.apiUrl, options), data: this.targetFor(dataUrl, options) }
  }

  /** The base URL a host's calls go to (part of every cache key: two upstreams never share entries). */
  baseUrl(host: UpstreamHost): string | undefined {
    return this.byHost[host]?.base
  }

  /**
   * Sends one GET, retrying only when the connection failed before an answer, and answers with any
   * status below 500 other than 429, 418 and 403. Everything else is an AppError UPSTREAM_UNAVAILABLE
   * (502): 5xx, timeouts, rate limits and bans (with Retry-After), our own budget being spent.
   * `deadline` is a performance.now() time by which the call has given up. `refresh` marks a call
   * whose caller still holds an older answer to fall back on: it leaves the last part of the budget
   * to calls that have none.
   */
  async get(call: UpstreamCall, deadline: number, refresh = false): Promise<UpstreamResponse> {
    const target = this.byHost[call.host]
    if (!target) throw unavailable('no upstream exchange is configured')
    const { origin } = target
    const now = this.now()
    if (now < origin.blockedUntil) {
      const seconds = Math.ceil((origin.blockedUntil - now) / 1000)
      throw unavailable(`the upstream exchange asked us to back off; retry in ${seconds} s`, seconds)
    }
    const keep = refresh ? REFRESH_KEEP : 0
    if (!origin.weight.tryReserve(call.weight, now, keep)) {
      throw unavailable('the upstream request-weight budget for this minute is spent', secondsToNextMinute(now))
    }
    if (call.host === 'data' && !origin.dataRequests.tryTake(now, keep)) {
      origin.weight.settle(call.weight, { answered: false }, now)
      throw unavailable('the upstream request budget of the futures-data endpoints is spent', 60)
    }
    let response
    try {
      response = await this.send(origin, `${target.prefix}${call.path}${call.query ? `?${call.query}` : ''}`, deadline, call.headers)
    } catch (error) {
      origin.weight.settle(call.weight, { answered: false }, this.now())
      countRequest(call.path, 'error', undefined)
      throw error
    }
    origin.weight.settle(call.weight, { answered: true, reported: response.usedWeight }, this.now())
    countRequest(call.path, response.status, response.usedWeight)
    return this.judge(origin, response)
  }

  /**
   * Sends one request of any method exactly once, for calls that change state on the exchange (an
   * order): a request that may have reached the exchange is never sent again here, because its outcome
   * is unknown until looked up. Only a connection that was never opened is tried again. Every HTTP
   * answer but 429 and 418 is returned as it is, 5xx included: the caller tells a failure from an
   * unknown outcome by the exchange's message. A transport failure throws UPSTREAM_UNAVAILABLE whose
   * `sent` says whether the request may have arrived.
   */
  async sendOnce(call: UpstreamCall & { method: 'GET' | 'POST' | 'PUT' | 'DELETE' }, deadline: number): Promise<UpstreamResponse> {
    const target = this.byHost[call.host]
    if (!target) throw notSent(unavailable('no upstream exchange is configured'))
    const { origin } = target
    const now = this.now()
    if (now < origin.blockedUntil) {
      const seconds = Math.ceil((origin.blockedUntil - now) / 1000)
      throw notSent(unavailable(`the upstream exchange asked us to back off; retry in ${seconds} s`, seconds))
    }
    if (!origin.weight.tryReserve(call.weight, now, 0)) {
      throw notSent(unavailable('the upstream request-weight budget for this minute is spent', secondsToNextMinute(now)))
    }
    const path = `${target.prefix}${call.path}${call.query ? `?${call.query}` : ''}`
    for (let attempt = 0; ; attempt++) {
      const remaining = deadline - performance.now()
      if (remaining <= 0) {
        origin.weight.settle(call.weight, { answered: false }, this.now())
        throw notSent(unavailable('the upstream exchange did not answer in time'))
      }
      try {
        const response = await origin.pool.request({
          method: call.method,
          path,
          headers: { ...call.headers, accept: 'application/json' },
          signal: AbortSignal.timeout(Math.ceil(remaining)),
        })
        const body = await response.body.text()
        const usedWeight = Number(header(response.headers['x-mbx-used-weight-1m']))
        const reported = Number.isFinite(usedWeight) && usedWeight >= 0 ? usedWeight : undefined
        origin.weight.settle(call.weight, { answered: true, reported }, this.now())
        const status = response.statusCode
        countRequest(call.path, status, reported)
        if (status === 429 || status === 418) this.judge(origin, { status, body, retryAfter: header(response.headers['retry-after']) })
        return { status, body }
      } catch (error) {
        if (isUpstreamUnavailable(error)) throw notSent(error)
        const code = (error as { code?: unknown }).code
        const delay = RETRY_DELAYS_MS[attempt]
        const neverConnected = code === 'ECONNREFUSED' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH'
        if (neverConnected && delay !== undefined && performance.now() + delay < deadline) {
          await sleep(delay)
          continue
        }
        origin.weight.settle(call.weight, { answered: false }, this.now())
        countRequest(call.path, 'error', undefined)
        if (!isTransportError(error)) throw error
        const failure = unavailable(describeFailure(error), undefined, error)
        throw neverConnected ? notSent(failure) : Object.assign(failure, { sent: true })
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.origins.values()].map((origin) => origin.pool.close()))
  }

  private async send(
    origin: Origin,
    path: string,
    deadline: number,
    headers: Record<string, string> = {},
  ): Promise<UpstreamResponse & { usedWeight: number | undefined; retryAfter: string | undefined }> {
    for (let attempt = 0; ; attempt++) {
      const remaining = deadline - performance.now()
      if (remaining <= 0) throw unavailable('the upstream exchange did not answer in time')
      try {
        const response = await origin.pool.request({
          method: 'GET',
          path,
          headers: { ...headers, accept: 'application/json' },
          signal: AbortSignal.timeout(Math.ceil(remaining)),
        })
        const body = await response.body.text()
        const usedWeight = Number(header(response.headers['x-mbx-used-weight-1m']))
        return {
          status: response.statusCode,
          body,
          usedWeight: Number.isFinite(usedWeight) && usedWeight >= 0 ? usedWeight : undefined,
          retryAfter: header(response.headers['retry-after']),
        }
      } catch (error) {
        const code = (error as { code?: unknown }).code
        const delay = RETRY_DELAYS_MS[attempt]
        if (typeof code === 'string' && CONNECTION_ERRORS.has(code) && delay !== undefined && performance.now() + delay < deadline) {
          await sleep(delay)
          continue
        }
        if (!isTransportError(error)) throw error
        throw unavailable(describeFailure(error), undefined, error)
      }
    }
  }

  private judge(origin: Origin, response: UpstreamResponse & { retryAfter: string | undefined }): UpstreamResponse {
    const { status } = response
    if (status === 429 || status === 418) {
      const parsed = Number(response.retryAfter)
      const seconds = Number.isFinite(parsed) && parsed > 0 ? Math.ceil(parsed) : DEFAULT_BACKOFF_S[status]
      origin.blockedUntil = Math.max(origin.blockedUntil, this.now() + seconds * 1000)
      throw unavailable(`the upstream exchange is rate limiting us (${status}); retry in ${seconds} s`, seconds)
    }
    // 403 is Binance's WAF refusing the IP, not an answer about the request.
    if (status >= 500 || status === 403) throw unavailable(`the upstream exchange answered ${status}`)
    return { status, body: response.body }
  }

  private targetFor(url: string | undefined, options: UpstreamClientOptions): Target | undefined {
    if (url === undefined) return undefined
    const parsed = new URL(url)
    const prefix = parsed.pathname.replace(/\/+$/, '')
    return { origin: this.originFor(parsed, options), prefix, base: `${parsed.origin}${prefix}` }
  }

  private originFor(parsed: URL, options: UpstreamClientOptions): Origin {
    const key = parsed.origin
    let origin = this.origins.get(key)
    if (!origin) {
      origin = {
        pool: new Pool(parsed.origin, {
          connections: 32,
          connectTimeout: options.connectTimeoutMs ?? 1000,
          ...(options.localAddress === undefined ? {} : { localAddress: options.localAddress }),
          headersTimeout: options.responseTimeoutMs ?? 2000,
          bodyTimeout: options.responseTimeoutMs ?? 2000,
          keepAliveTimeout: 10_000,
          maxResponseSize: 64 * 1024 * 1024,
        }),
        weight: new WeightBudget(options.weightLimit ?? WEIGHT_LIMIT, options.margin ?? 0.1),
        dataRequests: new RequestWindow(options.dataRequestLimit ?? 1000, options.margin ?? 0.1, 5 * 60_000),
        blockedUntil: 0,
      }
      this.origins.set(key, origin)
    }
    return origin
  }
}

/** The query string of `params` in the order given, skipping undefined values. */
export function canonicalQuery(params: Record<string, string | number | undefined>): string {
  let search: URLSearchParams | undefined // most cached reads have no parameters: no URLSearchParams for them
  for (const [name, value] of Object.entries(params)) if (value !== undefined) (search ??= new URLSearchParams()).append(name, String(value))
  return search === undefined ? '' : search.toString()
}

function header(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

function secondsToNextMinute(now: number): number {
  return Math.max(1, Math.ceil((60_000 - (now % 60_000)) / 1000))
}

/** Errors of the network or of undici, as opposed to a bug of ours (which must stay a 500). */
function isTransportError(error: unknown): boolean {
  const { code, name } = error as { code?: unknown; name?: unknown }
  return (typeof code === 'string' && (code.startsWith('E') || code.startsWith('UND_ERR'))) || name === 'TimeoutError' || name === 'AbortError'
}

function describeFailure(error: unknown): string {
  const code = (error as { code?: unknown; name?: unknown }).code
  const name = (error as { name?: unknown }).name
  if (name === 'TimeoutError' || name === 'AbortError' || code === 'UND_ERR_ABORTED' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return 'the upstream exchange did not answer in time'
  }
  if (code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENOTFOUND') {
    return 'the upstream exchange cannot be reached'
  }
  return 'the connection to the upstream exchange failed'
}

/** The 502 of market endpoints; Retry-After when we know when calling again makes sense. */
export function unavailable(message: string, retryAfterSeconds?: number, cause?: unknown): AppError {
  const error = new AppError('UPSTREAM_UNAVAILABLE', message, retryAfterSeconds ? { headers: { 'retry-after': String(retryAfterSeconds) } } : {})
  if (cause !== undefined) error.cause = cause
  return error
}

export function isUpstreamUnavailable(error: unknown): error is AppError {
  return error instanceof AppError && error.code === 'UPSTREAM_UNAVAILABLE'
}

/** Marks a sendOnce failure as one that never reached the exchange (nothing can have happened there). */
function notSent(error: AppError): AppError {
  return Object.assign(error, { sent: false })
}

/** True when a sendOnce failure may have reached the exchange: its outcome is unknown. */
export function mayHaveArrived(error: unknown): boolean {
  return isUpstreamUnavailable(error) && (error as { sent?: unknown }).sent === true
}
