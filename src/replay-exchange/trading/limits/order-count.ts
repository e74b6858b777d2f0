import { BinanceError } from '../../common/errors.js'

/** Binance's ORDERS limits per account (exchangeInfo rateLimits): 300 per 10 seconds, 1200 per minute. */
export const ORDERS_PER_10S = 300
export const ORDERS_PER_MINUTE = 1200

interface Windows {
  tenSeconds: number
  inTenSeconds: number
  minute: number
  inMinute: number
}

/**
 * Order counts per account in fixed windows of the wall clock (as the IP weight), for the
 * X-MBX-ORDER-COUNT-10S and X-MBX-ORDER-COUNT-1M headers; over either limit a new order answers
 * 429 -1015 and is not placed (a refused order does not count).
 */
export class OrderCounter {
  private readonly accounts = new Map<string, Windows>()

  constructor(private readonly now: () => number) {}

  /** Counts one new order, or throws -1015; returns the counts including it. */
  charge(apiKey: string): { tenSeconds: number; minute: number } {
    const w = this.windows(apiKey)
    if (w.inTenSeconds >= ORDERS_PER_10S) throw tooMany(ORDERS_PER_10S, '10 SECOND', w)
    if (w.inMinute >= ORDERS_PER_MINUTE) throw tooMany(ORDERS_PER_MINUTE, 'MINUTE', w)
    w.inTenSeconds++
    w.inMinute++
    return { tenSeconds: w.inTenSeconds, minute: w.inMinute }
  }

  private windows(apiKey: string): Windows {
    const now = this.now()
    let w = this.accounts.get(apiKey)
    if (!w) this.accounts.set(apiKey, (w = { tenSeconds: 0, inTenSeconds: 0, minute: 0, inMinute: 0 }))
    const tenSeconds = Math.floor(now / 10_000)
    const minute = Math.floor(now / 60_000)
    if (w.tenSeconds !== tenSeconds) Object.assign(w, { tenSeconds, inTenSeconds: 0 })
    if (w.minute !== minute) Object.assign(w, { minute, inMinute: 0 })
    return w
  }
}

function tooMany(limit: number, interval: string, w: Windows): BinanceError {
  return new BinanceError(429, -1015, `Too many new orders; current limit is ${limit} orders per ${interval}.`, {
    'x-mbx-order-count-10s': String(w.inTenSeconds),
    'x-mbx-order-count-1m': String(w.inMinute),
  })
}
