import { ApiClient, type PerpetuaClientOptions } from './api-client.js'
import { BacktestsApi } from './backtests.js'
import { MarketApi } from './market.js'
import { StrategiesApi } from './strategies.js'
import { SweepsApi } from './sweeps.js'
import { TemplatesApi } from './templates.js'
import { WebhooksApi } from './webhooks.js'

/**
 * A typed client of Perpetua's HTTP API for Node 20+ and browsers (fetch and WebCrypto only).
 *
 * `request(method, path, options)` reaches every operation of the OpenAPI document with its path,
 * query, body and answer typed from the document; `backtests`, `strategies`, `templates`, `webhooks` and `market`
 * wrap the common calls. Failures throw {@link PerpetuaError}.
 */
export class PerpetuaClient extends ApiClient {
  readonly backtests: BacktestsApi
  readonly sweeps: SweepsApi
  readonly strategies: StrategiesApi
  readonly templates: TemplatesApi
  readonly webhooks: WebhooksApi
  readonly market: MarketApi

  constructor(options: PerpetuaClientOptions) {
    super(options)
    this.backtests = new BacktestsApi(this)
    this.sweeps = new SweepsApi(this)
    this.strategies = new StrategiesApi(this)
    this.templates = new TemplatesApi(this)
    this.webhooks = new WebhooksApi(this)
    this.market = new MarketApi(this)
  }
}
