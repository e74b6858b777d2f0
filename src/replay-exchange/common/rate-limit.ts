import { BinanceError } from './errors.js'
import { WEIGHT_LIMIT_PER_MINUTE } from '../market-data/recorded/exchange-info.js'

/** Rejected requests within one minute after which an IP is banned (418), as Binance does to clients that ignore 429. */
const BAN_AFTER_REJECTIONS = 100
const BAN_MS = 2 * 60_000
/** /futures/data has its own budget: 1000 requests per 5 minutes per IP, no weight. */
const DATA_REQUESTS_PER_5M = 1000

interface IpState {
  minute: number
  used: number
  rejected: number
  bannedUntil: number
  dataWindow: number
  dataRequests: number
}

/**
 * Binance's per-IP request weight: a fixed window per clock minute, limit 2400. Over the limit a
 * request answers 429 with Retry-After (seconds to the next minute); an IP that keeps sending
 * through its 429s gets 418 for two minutes.
 */
export class WeightLimiter {
  private readonly ips = new Map<string, IpState>()

  constructor(private readonly now: () => number) {}

  private state(ip: string, now: number): IpState {
    let s = this.ips.get(ip)
    if (!s) this.ips.set(ip, (s = { minute: 0, used: 0, rejected: 0, bannedUntil: 0, dataWindow: 0, dataRequests: 0 }))
    const minute = Math.floor(now / 60_000)
    if (s.minute !== minute) Object.assign(s, { minute, used: 0, rejected: 0 })
    return s
  }

  /** The weight used in the current minute, for X-MBX-USED-WEIGHT-1M. */
  used(ip: string): number {
    return this.state(ip, this.now()).used
  }

  /** Charges `weight`, or throws the 429/418 BinanceError; returns the weight used this minute. */
  charge(ip: string, weight: number, futuresData = false): number {
    const now = this.now()
    const s = this.state(ip, now)
    if (s.bannedUntil > now) throw this.banned(ip, s, now)
    const overData = futuresData && this.overDataBudget(s, now)
    if (overData || s.used + weight > WEIGHT_LIMIT_PER_MINUTE) {
      if (++s.rejected > BAN_AFTER_REJECTIONS) {
        s.bannedUntil = now + BAN_MS
        throw this.banned(ip, s, now)
      }
      const resetAt = overData ? (s.dataWindow + 1) * 300_000 : (s.minute + 1) * 60_000
      throw new BinanceError(
        429,
        -1003,
        `Too many requests; current limit of IP(${ip}) is ${WEIGHT_LIMIT_PER_MINUTE} requests per minute. Please use the websocket for live updates to avoid polling the API.`,
        { 'retry-after': String(Math.max(1, Math.ceil((resetAt - now) / 1000))), 'x-mbx-used-weight-1m': String(s.used) },
      )
    }
    s.used += weight
    return s.used
  }

  private banned(ip: string, s: IpState, now: number): BinanceError {
    return new BinanceError(
      418,
      -1003,
      `Way too many requests; IP(${ip}) banned until ${s.bannedUntil}. Please use the websocket for live updates to avoid bans.`,
      { 'retry-after': String(Math.ceil((s.bannedUntil - now) / 1000)), 'x-mbx-used-weight-1m': String(s.used) },
    )
  }

  private overDataBudget(s: IpState, now: number): boolean {
    const window = Math.floor(now / 300_000)
    if (s.dataWindow !== window) Object.assign(s, { dataWindow: window, dataRequests: 0 })
    if (s.dataRequests >= DATA_REQUESTS_PER_5M) return true
    s.dataRequests++
    return false
  }
}
