import type { FastifyPluginAsync } from 'fastify'
import type { MarketRoutesOptions } from '../gateway-routes.js'
import { fapiMirrorRoutes } from './fapi-routes.js'
import { futuresDataMirrorRoutes } from './futures-data-routes.js'
import { specMirrorRoutes } from './spec-routes.js'

/** Every mirror endpoint: the spec's, and Binance's other public USD-M market endpoints under their own paths. */
export const mirrorRoutes: FastifyPluginAsync<MarketRoutesOptions> = async (app, options) => {
  await app.register(specMirrorRoutes, options)
  await app.register(fapiMirrorRoutes, options)
  await app.register(futuresDataMirrorRoutes, options)
}
