import type { FastifyPluginAsync } from 'fastify'
import { type MarketRoutesOptions, gatewayRoutes } from './gateway-routes.js'
import { mirrorRoutes } from './mirror-routes.js'
import { marketValidatorCompiler } from './validator.js'
import { v1MarketRoutes } from './v1-routes.js'

/** Every market-data endpoint: the mirror, the public gateway and /v1/market. */
export const marketRoutes: FastifyPluginAsync<MarketRoutesOptions> = async (app, options) => {
  app.setValidatorCompiler(marketValidatorCompiler)
  await app.register(mirrorRoutes, options)
  await app.register(gatewayRoutes, options)
  await app.register(v1MarketRoutes, options)
}
