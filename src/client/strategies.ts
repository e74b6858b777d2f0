import type { DeployOptions, Operation, QueryParams, Strategy, StrategyCreate, StrategyUpdate } from './operations.js'
import type { ApiClient } from './api-client.js'
import { followStrategy, type StrategyStream, type StreamOptions } from './strategy-stream.js'

type ListQuery = QueryParams<Operation<'/v1/strategies', 'get'>>
type HistoryQuery = QueryParams<Operation<'/v1/strategies/{id}/orders', 'get'>>

export class StrategiesApi {
  constructor(private readonly client: ApiClient) {}

  /** One page of the caller's strategies, newest first. */
  list(query: ListQuery = {}) {
    return this.client.get('/v1/strategies', { query })
  }
  /** Every strategy matching the query, across pages. */
  iterate(query: Omit<ListQuery, 'cursor'> = {}) {
    return this.client.iterate('/v1/strategies', { query })
  }
  get(id: string): Promise<Strategy> {
    return this.client.get('/v1/strategies/{id}', { path: { id } })
  }
  /** Stores a strategy as a draft. */
  create(strategy: StrategyCreate): Promise<Strategy> {
    return this.client.post('/v1/strategies', { body: strategy }) as Promise<Strategy>
  }
  /** Changes fields (not while deployed); a stopped or error strategy goes back to draft. */
  update(id: string, changes: StrategyUpdate): Promise<Strategy> {
    return this.client.patch('/v1/strategies/{id}', { path: { id }, body: changes }) as Promise<Strategy>
  }
  delete(id: string): Promise<void> {
    return this.client.delete('/v1/strategies/{id}', { path: { id } }) as Promise<void>
  }
  /** Deploys a draft or resumes a paused strategy; `{ dry_run: true }` trades the paper wallet. */
  deploy(id: string, options: DeployOptions = {}): Promise<Strategy> {
    return this.client.post('/v1/strategies/{id}/deploy', { path: { id }, body: options }) as Promise<Strategy>
  }
  /** Pauses a deployed strategy, closing its positions first when asked. */
  pause(id: string, options: { close_positions?: boolean } = {}): Promise<Strategy> {
    return this.client.post('/v1/strategies/{id}/pause', { path: { id }, body: options }) as Promise<Strategy>
  }
  /** One page of the strategy's orders, newest first; iterateOrders for all of them. */
  orders(id: string, query: HistoryQuery = {}) {
    return this.client.get('/v1/strategies/{id}/orders', { path: { id }, query })
  }
  iterateOrders(id: string, query: Omit<HistoryQuery, 'cursor'> = {}) {
    return this.client.iterate('/v1/strategies/{id}/orders', { path: { id }, query })
  }
  /** One page of the strategy's closed trades, newest first; iterateTrades for all of them. */
  trades(id: string, query: HistoryQuery = {}) {
    return this.client.get('/v1/strategies/{id}/trades', { path: { id }, query })
  }
  iterateTrades(id: string, query: Omit<HistoryQuery, 'cursor'> = {}) {
    return this.client.iterate('/v1/strategies/{id}/trades', { path: { id }, query })
  }
  /** What the strategy's current (or last) run holds, from its ledger; [] when flat or never run. */
  positions(id: string) {
    return this.client.get('/v1/strategies/{id}/positions', { path: { id } })
  }
  /** Follows the status stream with reconnects (strategy-stream.ts). */
  follow(id: string, options: StreamOptions): StrategyStream {
    return followStrategy(this.client, id, options)
  }
}
