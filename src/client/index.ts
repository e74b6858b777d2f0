/**
 * perpetua/client: a typed client of Perpetua for Node 20+ and browsers. See README.md beside this file.
 *
 *   import { PerpetuaClient } from 'perpetua/client'
 *   const client = new PerpetuaClient({ baseUrl: 'http://127.0.0.1:8080', apiKey, apiSecret })
 *   const job = await client.backtests.run({ template_id: 'sma_cross', … }, { onProgress: (j) => … })
 */
export { PerpetuaClient } from './perpetua-client.js'
export { ApiClient, type PerpetuaClientOptions, type WebSocketConstructor, type WebSocketLike } from './api-client.js'
export { PerpetuaError, retryAfter } from './errors.js'
export { BacktestsApi } from './backtests.js'
export { FIRST_POLL_MS, MIN_POLL_INTERVAL_MS, type WaitOptions } from './polling.js'
export { SweepsApi } from './sweeps.js'
export { StrategiesApi } from './strategies.js'
export { TemplatesApi } from './templates.js'
export { followStrategy, type StrategyStream, type StreamOptions } from './strategy-stream.js'
export { WebhooksApi } from './webhooks.js'
export { MarketApi } from './market.js'
export { paginate, type Page } from './pagination.js'
export { signRequest, hmacKey } from './signing.js'
export {
  verifyWebhook,
  WebhookVerificationError,
  WEBHOOK_TOLERANCE_SECONDS,
  type HeadersLike,
  type VerifyOptions,
  type WebhookEvent,
} from './webhook-verification.js'
export type * from './operations.js'
