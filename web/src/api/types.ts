/**
 * The API's shapes, taken as types from the server's own TypeBox schemas (type-only imports: nothing
 * of the server is bundled), so the dashboard cannot drift from what the server answers.
 */
export type { Job, JobCreate } from '../../../src/backtests/schemas.js'
export type { Strategy, StrategyCreate, DeployBody } from '../../../src/strategies/schemas.js'
export type { StrategyOrder, StrategyTrade } from '../../../src/live/schemas.js'
export type { StreamMessage } from '../../../src/live/stream/status-messages.js'
export type { TemplateInfo } from '../../../src/templates/schemas.js'
export type { Webhook, CreatedWebhook, WebhookCreate, TestDeliveryResult, DeliveryAttempt } from '../../../src/webhooks/schemas.js'
export type { FundingRate, TickerRow } from '../../../src/market/schemas.js'
export type { WhaleBoard } from '../../../src/market/smart-money-schemas.js'

import type { Job } from '../../../src/backtests/schemas.js'

export type JobResult = NonNullable<Job['result']>
export type BacktestTrade = NonNullable<JobResult['trades']>[number]
export type Metrics = JobResult['metrics']

/** A cursor page of any list endpoint. */
export interface Page<T> {
  data: T[]
  next_cursor: string | null
}

/** One kline as Binance's klines endpoint (and our mirror of it) answers it. */
export type KlineRow = [number, string, string, string, string, string, number, string, number, string, string, string]
