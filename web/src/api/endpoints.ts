/** Every API call the dashboard makes, one function each; all go through request(). */
import { request, target } from './http.js'
import type { Credentials } from './session.js'
import type {
  CreatedWebhook,
  DeliveryAttempt,
  DeployBody,
  FundingRate,
  Job,
  JobCreate,
  KlineRow,
  Page,
  Strategy,
  StrategyCreate,
  StrategyOrder,
  StrategyTrade,
  TemplateInfo,
  TestDeliveryResult,
  TickerRow,
  Webhook,
  WebhookCreate,
  WhaleBoard,
} from './types.js'

const id = encodeURIComponent

export const api = {
  templates: () => request<{ data: TemplateInfo[] }>('GET', '/v1/templates'),
  /** Whether these credentials open the API: GET /v1/templates is signed and needs no scope. */
  check: (as: Credentials) => request<{ data: TemplateInfo[] }>('GET', '/v1/templates', undefined, as),

  createBacktest: (body: JobCreate) => request<Job>('POST', '/v1/backtest/jobs', body),
  listBacktests: (query: { status?: string; from?: string; limit?: number; cursor?: string | null } = {}) =>
    request<Page<Job>>('GET', target('/v1/backtest/jobs', query)),
  /** The full job; the server allows this once per 5 s per job (429 with Retry-After otherwise). */
  backtest: (jobId: string) => request<Job>('GET', `/v1/backtest/jobs/${id(jobId)}`),
  cancelBacktest: (jobId: string) => request<Job>('POST', `/v1/backtest/jobs/${id(jobId)}/cancel`, {}),

  strategies: (query: { limit?: number; cursor?: string | null } = {}) => request<Page<Strategy>>('GET', target('/v1/strategies', query)),
  strategy: (strategyId: string) => request<Strategy>('GET', `/v1/strategies/${id(strategyId)}`),
  createStrategy: (body: StrategyCreate) => request<Strategy>('POST', '/v1/strategies', body),
  deploy: (strategyId: string, body: DeployBody) => request<Strategy>('POST', `/v1/strategies/${id(strategyId)}/deploy`, body),
  pause: (strategyId: string, closePositions: boolean) =>
    request<Strategy>('POST', `/v1/strategies/${id(strategyId)}/pause`, { close_positions: closePositions }),
  strategyOrders: (strategyId: string, limit = 50) => request<Page<StrategyOrder>>('GET', target(`/v1/strategies/${id(strategyId)}/orders`, { limit })),
  strategyTrades: (strategyId: string, limit = 50) => request<Page<StrategyTrade>>('GET', target(`/v1/strategies/${id(strategyId)}/trades`, { limit })),
  streamTicket: (strategyId: string) => request<{ ticket: string; expires_at: string }>('POST', `/v1/strategies/${id(strategyId)}/stream-ticket`, {}),

  /** The market's clock (the exchange's server time, through the mirror): where recorded history ends. */
  marketTime: () => request<{ serverTime: number }>('GET', '/fapi/v1/time'),
  fundingRates: () => request<FundingRate[]>('GET', '/funding/rates'),
  activeTickers: (minQuoteVolume: number) => request<TickerRow[]>('GET', target('/ticker/24hr/active', { min_quote_volume: minQuoteVolume })),
  whaleBoard: (minQuoteVolume: number) => request<WhaleBoard>('GET', target('/whale-board', { min_quote_volume: minQuoteVolume })),
  /** The public klines mirror (Binance's shape): at most 1500 bars per call. */
  klines: (symbol: string, interval: string, startTime: number, endTime: number, limit = 1500) =>
    request<KlineRow[]>('GET', target('/fapi/v1/klines', { symbol, interval, startTime, endTime, limit })),

  webhooks: (query: { limit?: number; cursor?: string | null } = {}) => request<Page<Webhook>>('GET', target('/v1/webhooks', query)),
  createWebhook: (body: WebhookCreate) => request<CreatedWebhook>('POST', '/v1/webhooks', body),
  testWebhook: (webhookId: string, eventType?: string) =>
    request<TestDeliveryResult>('POST', `/v1/webhooks/${id(webhookId)}/test`, eventType ? { event_type: eventType } : {}),
  deliveries: (webhookId: string, limit = 25) => request<Page<DeliveryAttempt>>('GET', target(`/v1/webhooks/${id(webhookId)}/deliveries`, { limit })),
}
