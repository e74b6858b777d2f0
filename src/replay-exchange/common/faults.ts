/** A fault for the next matching requests: added latency, an error status, or a dropped connection. */
export interface FaultSpec {
  /** A path prefix (e.g. "/fapi/v1/klines") or a RegExp tested against path and query; all paths when absent. */
  path?: string | RegExp
  /** Delay before answering (or before the status / drop below). */
  latencyMs?: number
  /** 404 is for archive files (`/data/…`): the archive lacks the file. */
  status?: 404 | 429 | 418 | 500 | 502 | 503
  retryAfterSeconds?: number
  /** Destroy the socket without a response. */
  drop?: true
  /** Matching requests to affect; until cleared when absent. */
  times?: number
  /**
   * Trading: execute the matching order request (POST order or algoOrder), then answer as if the outcome were lost: 503
   * "Unknown error, please check your request or try again later." or 408 -1007 (both mean
   * "execution status unknown" on Binance).
   */
  executeThen?: 503 | -1007
  /**
   * Trading: the matching order request reaches the matching engine `latencyMs` after it arrived and
   * executes then, whether or not the client still waits (Binance executes what it received; a client
   * that timed out meanwhile holds an unknown outcome); the answer follows the execution.
   */
  executeLate?: true
  /** Trading: GET and DELETE /fapi/v1/order answer -2013 / -2011 for an order that exists ("forgotten"). */
  forget?: true
  /**
   * Market streams: drop the closed-kline messages of the streams whose name matches `path` (e.g.
   * "ethusdt@kline_1m", a prefix or a RegExp): a symbol's stream goes silent while the socket stays open.
   */
  marketEvents?: 'drop'
  /**
   * Archive (`/data/…`): `checksum` makes a file's `.CHECKSUM` name another SHA-256 than the zip's;
   * `truncated` cuts the zip short (half its bytes). A slow file is `latencyMs`, a missing one `status: 404`.
   */
  archive?: 'checksum' | 'truncated'
  /**
   * Algo orders: `unknown` — a matching POST /fapi/v1/algoOrder is placed and acknowledged, but GET
   * algoOrder, openAlgoOrders and allAlgoOrders do not know it for `latencyMs` of wall time
   * (freqtrade#12681); `times` counts placements. `reject` — the next trigger (of the account's
   * algo orders) ends REJECTED with `rm` instead of placing its child; `times` counts triggers.
   */
  algo?: 'unknown' | 'reject'
  /**
   * Algo orders: the order of a trigger's events for the next `times` triggers (else the exchange's
   * `algoEvents` option): `fill-first` sends the child's ORDER_TRADE_UPDATE fill before ALGO_UPDATE
   * TRIGGERED and FINISHED (as nautilus#3664 saw), `triggered-first` sends TRIGGERED before the child's events.
   */
  algoEvents?: 'fill-first' | 'triggered-first'
  /** Trading: drop user-stream events, or delay them by `latencyMs`; `event` limits it to one event type. */
  userEvents?: 'drop' | 'delay'
  event?: string
  /**
   * Only this account's requests (their X-MBX-APIKEY) or user-stream events, so one test run's faults
   * leave the other accounts on the same venue alone; every account when absent.
   */
  account?: string
}

export type FaultKind = 'request' | 'execution' | 'late' | 'forget' | 'userEvents' | 'marketEvents' | 'archiveChecksum' | 'archiveTruncated' | 'algoUnknown' | 'algoReject' | 'algoEvents'

/** Which hook applies a fault: the request hook, the order route (after or before it executes), the order lookup or the user stream. */
export function faultKind(fault: FaultSpec): FaultKind {
  if (fault.executeThen !== undefined) return 'execution'
  if (fault.executeLate) return 'late'
  if (fault.forget) return 'forget'
  if (fault.userEvents !== undefined) return 'userEvents'
  if (fault.marketEvents !== undefined) return 'marketEvents'
  if (fault.archive === 'checksum') return 'archiveChecksum'
  if (fault.archive === 'truncated') return 'archiveTruncated'
  if (fault.algo === 'unknown') return 'algoUnknown'
  if (fault.algo === 'reject') return 'algoReject'
  if (fault.algoEvents !== undefined) return 'algoEvents'
  return 'request'
}

export interface FaultInjector {
  /** Adds a fault after those already active; returns a function that removes it. */
  add(fault: FaultSpec): () => void
  clear(): void
  /** The active faults with their remaining `times`. */
  active(): FaultSpec[]
  /** Closes every open WebSocket stream connection (code 1006-like: the socket is destroyed); returns how many. */
  disconnectStreams(): number
  /** Closes the user-data stream sockets (of one account's API key, or all); returns how many. */
  closeUserStreams(apiKey?: string): number
  /** Expires the listenKey now (of one account, or all): listenKeyExpired goes out and the key is gone; returns how many. */
  expireListenKeys(apiKey?: string): number
}

const STATUSES = new Set([404, 429, 418, 500, 502, 503])

/** Checks a fault that arrived as JSON (POST /__replay/faults); `pathRegExp` carries a RegExp source. */
export function parseFault(body: unknown): FaultSpec {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('fault must be a JSON object')
  const raw = body as Record<string, unknown>
  const known = ['path', 'pathRegExp', 'latencyMs', 'status', 'retryAfterSeconds', 'drop', 'times', 'executeThen', 'executeLate', 'forget', 'userEvents', 'event', 'account', 'marketEvents', 'archive', 'algo', 'algoEvents']
  const unknown = Object.keys(raw).filter((key) => !known.includes(key))
  if (unknown.length > 0) throw new Error(`unknown fault fields: ${unknown.join(', ')}`)
  const fault: FaultSpec = {}
  if (raw.path !== undefined && raw.pathRegExp !== undefined) throw new Error('give path or pathRegExp, not both')
  if (raw.path !== undefined) {
    if (typeof raw.path !== 'string') throw new Error('path must be a string')
    fault.path = raw.path
  }
  if (raw.pathRegExp !== undefined) {
    if (typeof raw.pathRegExp !== 'string') throw new Error('pathRegExp must be a string')
    fault.path = new RegExp(raw.pathRegExp)
  }
  const count = (name: string, max: number): number | undefined => {
    const value = raw[name]
    if (value === undefined) return undefined
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) throw new Error(`${name} must be an integer from 0 to ${max}`)
    return value
  }
  const latencyMs = count('latencyMs', 600_000)
  const retryAfterSeconds = count('retryAfterSeconds', 86_400)
  const times = count('times', 1_000_000)
  if (latencyMs !== undefined) fault.latencyMs = latencyMs
  if (retryAfterSeconds !== undefined) fault.retryAfterSeconds = retryAfterSeconds
  if (times !== undefined) fault.times = times
  if (raw.status !== undefined) {
    if (typeof raw.status !== 'number' || !STATUSES.has(raw.status)) throw new Error('status must be one of 404, 429, 418, 500, 502, 503')
    fault.status = raw.status as FaultSpec['status']
  }
  if (raw.drop !== undefined) {
    if (raw.drop !== true) throw new Error('drop must be true')
    fault.drop = true
  }
  if (raw.executeThen !== undefined) {
    if (raw.executeThen !== 503 && raw.executeThen !== -1007) throw new Error('executeThen must be 503 or -1007')
    fault.executeThen = raw.executeThen
  }
  if (raw.executeLate !== undefined) {
    if (raw.executeLate !== true) throw new Error('executeLate must be true')
    fault.executeLate = true
  }
  if (raw.forget !== undefined) {
    if (raw.forget !== true) throw new Error('forget must be true')
    fault.forget = true
  }
  if (raw.userEvents !== undefined) {
    if (raw.userEvents !== 'drop' && raw.userEvents !== 'delay') throw new Error('userEvents must be "drop" or "delay"')
    fault.userEvents = raw.userEvents
  }
  if (raw.marketEvents !== undefined) {
    if (raw.marketEvents !== 'drop') throw new Error('marketEvents must be "drop"')
    fault.marketEvents = 'drop'
  }
  if (raw.archive !== undefined) {
    if (raw.archive !== 'checksum' && raw.archive !== 'truncated') throw new Error('archive must be "checksum" or "truncated"')
    fault.archive = raw.archive
  }
  if (raw.algo !== undefined) {
    if (raw.algo !== 'unknown' && raw.algo !== 'reject') throw new Error('algo must be "unknown" or "reject"')
    fault.algo = raw.algo
  }
  if (raw.algoEvents !== undefined) {
    if (raw.algoEvents !== 'fill-first' && raw.algoEvents !== 'triggered-first') throw new Error('algoEvents must be "fill-first" or "triggered-first"')
    fault.algoEvents = raw.algoEvents
  }
  if (raw.event !== undefined) {
    if (typeof raw.event !== 'string') throw new Error('event must be a string such as "ORDER_TRADE_UPDATE"')
    fault.event = raw.event
  }
  if (raw.account !== undefined) {
    if (typeof raw.account !== 'string' || raw.account === '') throw new Error('account must be an API key')
    fault.account = raw.account
  }
  return checkFault(fault)
}

export function checkFault(fault: FaultSpec): FaultSpec {
  const kind = faultKind(fault)
  const trading = [
    fault.executeThen !== undefined,
    fault.executeLate === true,
    fault.forget === true,
    fault.userEvents !== undefined,
    fault.marketEvents !== undefined,
    fault.archive !== undefined,
    fault.algo !== undefined,
    fault.algoEvents !== undefined,
  ].filter(Boolean).length
  if (trading > 1) throw new Error('a fault is one of executeThen, executeLate, forget, userEvents, marketEvents, archive, algo or algoEvents')
  if (fault.algo === 'unknown' && fault.latencyMs === undefined) throw new Error('algo "unknown" needs latencyMs (how long the query endpoints do not know the order)')
  if (kind !== 'request' && (fault.status !== undefined || fault.drop)) throw new Error('status and drop are request faults, not trading ones')
  if (fault.userEvents === 'delay' && fault.latencyMs === undefined) throw new Error('userEvents "delay" needs latencyMs')
  if (fault.executeLate && fault.latencyMs === undefined) throw new Error('executeLate needs latencyMs')
  if (fault.event !== undefined && kind !== 'userEvents') throw new Error('event goes with userEvents')
  if (kind === 'request' && fault.latencyMs === undefined && fault.status === undefined && !fault.drop) {
    throw new Error('a fault needs latencyMs, status, drop, executeThen, executeLate, forget or userEvents')
  }
  if (fault.status !== undefined && fault.drop) throw new Error('a fault answers a status or drops the connection, not both')
  if (fault.times !== undefined && fault.times < 1) throw new Error('times must be at least 1')
  return fault
}

interface ActiveFault {
  spec: FaultSpec
  remaining: number
}

/** Holds the active faults and picks the one for a request (the first added that matches). */
export class Faults {
  private list: ActiveFault[] = []

  add(spec: FaultSpec): () => void {
    const fault = { spec: { ...checkFault(spec) }, remaining: spec.times ?? Number.POSITIVE_INFINITY }
    this.list.push(fault)
    return () => {
      this.list = this.list.filter((f) => f !== fault)
    }
  }

  clear(): void {
    this.list = []
  }

  active(): FaultSpec[] {
    return this.list.map((f) => ({ ...f.spec, ...(Number.isFinite(f.remaining) ? { times: f.remaining } : {}) }))
  }

  /**
   * The fault of this kind for a request to `url` (path and query; for user events, the event
   * type is matched against `event`) of the account `apiKey`, counting it against the fault's `times`.
   */
  take(url: string, kind: FaultKind = 'request', apiKey?: string): FaultSpec | undefined {
    if (this.list.length === 0) return undefined
    const path = url.split('?')[0]!
    const fault = this.list.find((f) => {
      if (faultKind(f.spec) !== kind) return false
      if (f.spec.account !== undefined && f.spec.account !== apiKey) return false
      if (kind === 'userEvents') return f.spec.event === undefined || f.spec.event === url
      const p = f.spec.path
      if (p === undefined) return true
      if (typeof p === 'string') return path.startsWith(p)
      p.lastIndex = 0 // a /g or /y RegExp keeps state between tests
      return p.test(url)
    })
    if (!fault) return undefined
    if (--fault.remaining <= 0) this.list = this.list.filter((f) => f !== fault)
    return fault.spec
  }
}
