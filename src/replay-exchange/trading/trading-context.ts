import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Faults } from '../common/faults.js'
import type { Query } from '../common/params.js'
import type { WeightLimiter } from '../common/rate-limit.js'
import type { Market } from '../market-data/market.js'
import type { Account } from './accounts/account.js'
import type { ViewContext } from './accounts/account-views.js'
import type { OrderCounter } from './limits/order-count.js'
import { marginSummary } from './positions/margin.js'
import { authenticate, type SignedDeps } from './signed.js'
import type { UserStreams } from './user-stream/user-streams.js'
import type { Venue } from './venue.js'

export interface TradingDeps {
  venue: Venue
  market: Market
  limiter: WeightLimiter
  orderCounter: OrderCounter
  streams: UserStreams
  faults: Faults
  signed: SignedDeps
}

export interface SignedCall {
  account: Account
  params: Query
  request: FastifyRequest
  reply: FastifyReply
}

/**
 * Registers a SIGNED endpoint: IP weight first (as on Binance), then the signature checks, then
 * the account is settled up to replay now (resting fills, funding, liquidation) before the handler reads it.
 */
export function signedRoute(
  app: FastifyInstance,
  deps: TradingDeps,
  method: 'GET' | 'POST' | 'PUT' | 'DELETE',
  url: string,
  weight: number | ((request: FastifyRequest) => number),
  handler: (call: SignedCall) => unknown,
): void {
  app.route({
    method,
    url,
    handler: async (request, reply) => {
      const used = deps.limiter.charge(request.ip, typeof weight === 'number' ? weight : weight(request))
      reply.header('x-mbx-used-weight-1m', String(used))
      const { account, params } = authenticate(request, deps.signed)
      deps.venue.settle(account)
      return handler({ account, params, request, reply })
    },
  })
}

/** The views' market context at replay now. */
export function viewContext(deps: TradingDeps, account: Account): ViewContext {
  const now = deps.venue.now()
  const marks = new Map<string, number>()
  const mark = (symbol: string) => {
    let value = marks.get(symbol)
    if (value === undefined) marks.set(symbol, (value = deps.venue.mark(symbol, now)))
    return value
  }
  return {
    summary: marginSummary(account, mark, deps.venue.brackets),
    brackets: deps.venue.brackets,
    mark,
    info: (symbol) => deps.market.get(symbol)!.info,
    symbols: () =>
      deps.market
        .all()
        .filter((s) => s.info.onboardDate <= now)
        .map((s) => s.info.symbol),
  }
}
