import { setTimeout as sleep } from 'node:timers/promises'
import type { ExchangeAnswer } from './answer.js'

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE'
export type Params = Record<string, string | number | boolean | undefined>

/** One signed (or API-key-only) call of the exchange, as BinanceTradingClient makes it. */
export type SignedCall = <T>(method: Method, path: string, params: Params, weight: number, signed?: boolean) => Promise<ExchangeAnswer<T>>

/**
 * How long a placement whose outcome is unknown is looked up by its client id before we say it is still
 * unknown: Binance may not show an order it accepted for a while (freqtrade#12681: "sometimes for over
 * half an hour"), so "not found" during this window proves nothing.
 */
const LOOKUP_DELAYS_MS = [200, 400, 800, 1600]

/** Looks an order up until it is seen or the window passes; never concludes absence (`what` names it in the answer). */
export async function lookUpUntilSeen<T>(look: () => Promise<ExchangeAnswer<T>>, what: string): Promise<ExchangeAnswer<T>> {
  for (const delay of LOOKUP_DELAYS_MS) {
    await sleep(delay)
    const found = await look()
    if (found.kind === 'ok') return found
  }
  return { kind: 'unknown', reason: `${what} was not found yet, which does not prove it was not placed` }
}
