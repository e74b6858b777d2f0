import type { CachedResponse } from '../response-cache.js'
import { okJson } from '../upstream-payloads.js'
import { unavailable } from '../upstream-client.js'
import { type Forwarded, forwarded } from './forward.js'

/**
 * GET /topLongShortPositionRatio rows: the exchange's own fields plus longPosition and shortPosition,
 * which the spec's row gives position-weighted endpoints. Binance's USD-M series names the shares
 * longAccount/shortAccount (COIN-M names them longPosition/shortPosition: kept when present).
 * Refusals pass unchanged.
 */
export function withPositionShares(entry: CachedResponse): Forwarded {
  if (entry.status !== 200) return forwarded(entry)
  return {
    status: 200,
    body: entry.derive('withPositionShares', () => {
      const rows = okJson(entry)
      const malformed = () => unavailable('the upstream exchange sent an unexpected position ratio payload')
      if (!Array.isArray(rows)) throw malformed()
      return Buffer.from(
        JSON.stringify(
          (rows as unknown[]).map((value) => {
            if (typeof value !== 'object' || value === null) throw malformed()
            const row = value as Record<string, unknown>
            return { ...row, longPosition: row.longPosition ?? row.longAccount, shortPosition: row.shortPosition ?? row.shortAccount }
          }),
        ),
      )
    }),
  }
}
