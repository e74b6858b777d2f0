/** A fault for the next matching requests: added latency, an error status, or a dropped connection. */
export interface FaultSpec {
  /** A path prefix (e.g. "/fapi/v1/klines") or a RegExp tested against path and query; all paths when absent. */
  path?: string | RegExp
  /** Delay before answering (or before the status / drop below). */
  latencyMs?: number
  status?: 429 | 418 | 500 | 502 | 503
  retryAfterSeconds?: number
  /** Destroy the socket without a response. */
  drop?: true
  /** Matching requests to affect; until cleared when absent. */
  times?: number
}

export interface FaultInjector {
  /** Adds a fault after those already active; returns a function that removes it. */
  add(fault: FaultSpec): () => void
  clear(): void
  /** The active faults with their remaining `times`. */
  active(): FaultSpec[]
  /** Closes every open WebSocket stream connection (code 1006-like: the socket is destroyed); returns how many. */
  disconnectStreams(): number
}

const STATUSES = new Set([429, 418, 500, 502, 503])

/** Checks a fault that arrived as JSON (POST /__replay/faults); `pathRegExp` carries a RegExp source. */
export function parseFault(body: unknown): FaultSpec {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new Error('fault must be a JSON object')
  const raw = body as Record<string, unknown>
  const known = ['path', 'pathRegExp', 'latencyMs', 'status', 'retryAfterSeconds', 'drop', 'times']
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
    if (typeof raw.status !== 'number' || !STATUSES.has(raw.status)) throw new Error('status must be one of 429, 418, 500, 502, 503')
    fault.status = raw.status as FaultSpec['status']
  }
  if (raw.drop !== undefined) {
    if (raw.drop !== true) throw new Error('drop must be true')
    fault.drop = true
  }
  return checkFault(fault)
}

export function checkFault(fault: FaultSpec): FaultSpec {
  if (fault.latencyMs === undefined && fault.status === undefined && !fault.drop) throw new Error('a fault needs latencyMs, status or drop')
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

  /** The fault for a request to `url` (path and query), counting it against the fault's `times`. */
  take(url: string): FaultSpec | undefined {
    const path = url.split('?')[0]!
    const fault = this.list.find((f) => {
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
