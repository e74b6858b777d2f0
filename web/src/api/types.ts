/**
 * The API's shapes, as the typed client (src/client) generates them from the OpenAPI document, under
 * the names the pages use.
 */
import type { BacktestJob, components, Operation, QueryParams, SuccessBody } from '../../../src/client/index.js'

export type {
  BacktestRequest as JobCreate,
  CreatedWebhook,
  CustomTemplate,
  CustomTemplateCreate,
  CustomTemplateUpdate,
  Page,
  DeployOptions as DeployBody,
  Strategy,
  StrategyCreate,
  StrategyUpdate,
  StrategyOrder,
  StrategyTrade,
  StreamMessage,
  Template as TemplateInfo,
  TemplateDetail,
  Webhook,
  WebhookCreate,
  WebhookDelivery as DeliveryAttempt,
  WebhookTestResult as TestDeliveryResult,
} from '../../../src/client/index.js'

type Ok<P extends Parameters<import('../../../src/client/index.js').PerpetuaClient['get']>[0]> = SuccessBody<Operation<P, 'get'>>

export type Job = BacktestJob
export type JobResult = NonNullable<Job['result']>
export type BacktestTrade = NonNullable<JobResult['trades']>[number]
export type Metrics = JobResult['metrics']
/** What history a symbol and timeframe have: `{symbol, timeframe, start, end}` (ISO, or null when none). */
export type Coverage = Ok<'/v1/backtest/coverage'>
export type FundingRate = Ok<'/funding/rates'>[number]
export type TickerRow = Ok<'/ticker/24hr/active'>[number]
export type WhaleBoard = Ok<'/whale-board'>
/** One kline as Binance's klines endpoint (and our mirror of it) answers it: [open time, open, high, low, close, …]. */
export type KlineRow = Ok<'/fapi/v1/klines'>[number]
export type Schemas = components['schemas']
export type StrategyPosition = Ok<'/v1/strategies/{id}/positions'>[number]
export type KlineInterval = QueryParams<Operation<'/fapi/v1/klines', 'get'>>['interval']
