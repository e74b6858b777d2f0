/** Every API call the dashboard makes, one function each, through the signed-in typed client (src/client). */
import { client, clientFor, type Credentials } from './session.js'
import type { SweepCreate } from './sweep-types.js'
import type { CustomTemplateCreate, CustomTemplateUpdate, DeployBody, JobCreate, KlineInterval, StrategyCreate, StrategyUpdate, WebhookCreate } from './types.js'

export const api = {
  templates: () => client().templates.list(),
  /** A built-in, or one of the user's own with its source and versions (`version`: an older one). */
  template: (templateId: string, version?: number) => client().templates.get(templateId, version),
  /** Uploads a module as a new template; the server's sandbox checks it first (400 on source with line:column). */
  createTemplate: (body: CustomTemplateCreate) => client().templates.create(body),
  /** Uploads a new version of one of the user's templates. */
  updateTemplate: (templateId: string, body: CustomTemplateUpdate) => client().templates.update(templateId, body),
  /** 409 while a deployed strategy uses it. */
  deleteTemplate: (templateId: string) => client().templates.delete(templateId),
  /** Whether these credentials open the API: GET /v1/templates is signed and needs no scope. */
  check: async (credentials: Credentials) => {
    const candidate = clientFor(credentials)
    await candidate.get('/v1/templates')
    return candidate
  },

  createBacktest: (body: JobCreate) => client().backtests.create(body),
  listBacktests: (query: { from?: string; limit?: number; cursor?: string | null } = {}) =>
    client().backtests.list({ ...(query.from ? { from: query.from } : {}), ...(query.limit ? { limit: query.limit } : {}), ...(query.cursor ? { cursor: query.cursor } : {}) }),
  /** The full job; the server allows this once per 5 s per job (429 with Retry-After otherwise). */
  backtest: (jobId: string) => client().backtests.get(jobId),
  cancelBacktest: (jobId: string) => client().backtests.cancel(jobId),

  createSweep: (body: SweepCreate) => client().sweeps.create(body),
  listSweeps: (query: { limit?: number; cursor?: string | null } = {}) =>
    client().sweeps.list({ ...(query.limit ? { limit: query.limit } : {}), ...(query.cursor ? { cursor: query.cursor } : {}) }),
  /** One sweep with its result; the server allows this once per 5 s per sweep, as for a job. */
  sweep: (sweepId: string) => client().sweeps.get(sweepId),
  cancelSweep: (sweepId: string) => client().sweeps.cancel(sweepId),
  /** One page of the sweep's runs; `sort: 'objective'` best first. */
  sweepRuns: (sweepId: string, query: { sort?: 'run' | 'objective'; limit?: number; cursor?: string | null } = {}) =>
    client().sweeps.runs(sweepId, { ...(query.sort ? { sort: query.sort } : {}), ...(query.limit ? { limit: query.limit } : {}), ...(query.cursor ? { cursor: query.cursor } : {}) }),
  /** The T × N daily returns the statistics were computed from. */
  sweepReturns: (sweepId: string, runIds?: string[]) => client().sweeps.returns(sweepId, runIds ? { runIds } : {}),

  strategies: (query: { limit?: number; cursor?: string | null } = {}) =>
    client().strategies.list({ ...(query.limit ? { limit: query.limit } : {}), ...(query.cursor ? { cursor: query.cursor } : {}) }),
  strategy: (strategyId: string) => client().strategies.get(strategyId),
  createStrategy: (body: StrategyCreate) => client().strategies.create(body),
  deploy: (strategyId: string, body: DeployBody) => client().strategies.deploy(strategyId, body),
  /** The user's exchange keys, newest first; undefined when the credentials cannot list them (an API key: 403, app tokens only). */
  exchangeKeys: async () => {
    try {
      return (await client().get('/v1/exchange-keys')).data
    } catch {
      return undefined
    }
  },
  /** Any edit moves a strategy in error (or stopped) back to draft. */
  updateStrategy: (strategyId: string, body: StrategyUpdate) => client().strategies.update(strategyId, body),
  /** What the current (or last) run holds now, from its ledger; [] when flat. */
  strategyPositions: (strategyId: string) => client().strategies.positions(strategyId),
  pause: (strategyId: string, closePositions: boolean) => client().strategies.pause(strategyId, { close_positions: closePositions }),
  strategyOrders: (strategyId: string, limit = 50) => client().strategies.orders(strategyId, { limit }),
  strategyTrades: (strategyId: string, limit = 50) => client().strategies.trades(strategyId, { limit }),

  /** The market's clock (the exchange's server time, through the mirror): where recorded history ends. */
  marketTime: () => client().get('/fapi/v1/time') as Promise<{ serverTime: number }>,
  fundingRates: () => client().market.fundingRates(),
  activeTickers: (minQuoteVolume: number) => client().market.activeTickers(minQuoteVolume),
  whaleBoard: (minQuoteVolume: number) => client().market.whaleBoard(minQuoteVolume),
  /** The public klines mirror (Binance's shape): at most 1500 bars per call. */
  klines: (symbol: string, interval: KlineInterval, startTime: number, endTime: number, limit = 1500) =>
    client().get('/fapi/v1/klines', { query: { symbol, interval, startTime, endTime, limit } }),

  webhooks: (query: { limit?: number } = {}) => client().webhooks.list(query.limit ? { limit: query.limit } : {}),
  webhook: (webhookId: string) => client().webhooks.get(webhookId),
  /** Our PATCH: `active` reactivates a paused or broken webhook (a broken one refuses test deliveries). */
  setWebhookStatus: (webhookId: string, status: 'active' | 'paused') => client().webhooks.update(webhookId, { status }),
  createWebhook: (body: WebhookCreate) => client().webhooks.create(body),
  testWebhook: (webhookId: string, eventType?: string) => client().webhooks.test(webhookId, eventType),
  deliveries: (webhookId: string, limit = 25) => client().webhooks.deliveries(webhookId, { limit }),
}

