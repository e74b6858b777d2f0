import type { FastifyInstance } from 'fastify'
import { apiKeyAccount } from '../signed.js'
import type { TradingDeps } from '../trading-context.js'

/** POST, PUT and DELETE /fapi/v1/listenKey: USER_STREAM endpoints, the API key only (no signature), weight 1. */
export function listenKeyRoutes(app: FastifyInstance, deps: TradingDeps): void {
  const route = (method: 'POST' | 'PUT' | 'DELETE', answer: (apiKey: string) => unknown) =>
    app.route({
      method,
      url: '/fapi/v1/listenKey',
      handler: async (request, reply) => {
        reply.header('x-mbx-used-weight-1m', String(deps.limiter.charge(request.ip, 1)))
        return answer(apiKeyAccount(request, deps.signed).apiKey)
      },
    })
  route('POST', (apiKey) => ({ listenKey: deps.streams.open(apiKey) }))
  route('PUT', (apiKey) => ({ listenKey: deps.streams.keepAlive(apiKey) }))
  route('DELETE', (apiKey) => {
    deps.streams.close(apiKey)
    return {}
  })
}
