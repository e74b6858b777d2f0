import type { FastifyInstance } from 'fastify'
import type { ReplayClock } from '../common/clock.js'
import type { Faults } from '../common/faults.js'
import type { WeightLimiter } from '../common/rate-limit.js'
import type { Market } from '../market-data/market.js'
import { accountRoutes } from './accounts/account-routes.js'
import { type AlgoEventOrder, AlgoBook } from './algo/algo-book.js'
import { algoRoutes } from './algo/algo-routes.js'
import { checkAccounts, type ReplayAccount } from './accounts/accounts-file.js'
import { readState, writeState } from './accounts/state-file.js'
import { OrderCounter } from './limits/order-count.js'
import { orderRoutes } from './orders/order-routes.js'
import type { SignedDeps } from './signed.js'
import type { TradingDeps } from './trading-context.js'
import { listenKeyRoutes } from './user-stream/listen-key-routes.js'
import { UserStreams } from './user-stream/user-streams.js'
import { Venue } from './venue.js'

/** Resting orders, funding, liquidations and listenKey expiry are also settled on this wall-clock timer, not only on requests. */
const SETTLE_EVERY_MS = 250

export interface TradingWing {
  venue: Venue
  streams: UserStreams
  /** The SIGNED check of this wing's accounts, for the spot-wallet endpoints ccxt calls. */
  signed: SignedDeps
  close(): void
}

/**
 * The trading wing: accounts (configured, then overlaid by the --state file), the matching venue,
 * the SIGNED endpoints, the listenKey endpoints and the user data streams.
 */
export function startTradingWing(
  app: FastifyInstance,
  options: { market: Market; clock: ReplayClock; faults: Faults; limiter: WeightLimiter; accounts: ReplayAccount[]; stateFile: string | undefined; algoEvents?: AlgoEventOrder },
): TradingWing {
  const { market, clock, faults, limiter } = options
  const streams = new UserStreams(() => clock.now(), faults)
  const venue = new Venue(market, clock, streams)
  const algo = new AlgoBook(venue, market, streams, faults, clock.wallNow, options.algoEvents ?? 'fill-first')
  venue.algo = algo
  const saved = options.stateFile ? readState(options.stateFile) : undefined
  if (saved) {
    venue.ids = { ...venue.ids, ...saved.ids }
    for (const account of saved.accounts) venue.accounts.set(account.apiKey, { ...account, settledUntil: Math.min(account.settledUntil, clock.now()) })
  }
  for (const account of checkAccounts(options.accounts)) if (!venue.accounts.has(account.apiKey)) venue.create(account.apiKey, account.secretKey, account.balances)

  // Binance takes TRADE parameters in an application/x-www-form-urlencoded body too; the signature covers it as sent.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => done(null, body))
  const deps: TradingDeps = {
    venue,
    market,
    limiter,
    faults,
    streams,
    orderCounter: new OrderCounter(clock.wallNow),
    signed: { account: (apiKey) => venue.accounts.get(apiKey), wallNow: clock.wallNow, replayNow: () => clock.now() },
  }
  orderRoutes(app, deps)
  algoRoutes(app, deps, algo)
  accountRoutes(app, deps)
  listenKeyRoutes(app, deps)
  streams.routes(app)

  const save = () => {
    if (!options.stateFile || !venue.changed) return
    venue.changed = false
    writeState(options.stateFile, venue.ids, venue.accounts.values())
  }
  const timer = setInterval(() => {
    try {
      venue.settleAll()
      streams.expireDue()
      save()
    } catch (error) {
      process.stderr.write(`replay exchange: settling failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
    }
  }, SETTLE_EVERY_MS)
  timer.unref()
  return {
    venue,
    streams,
    signed: deps.signed,
    close() {
      clearInterval(timer)
      save()
      streams.shutdown()
    },
  }
}
