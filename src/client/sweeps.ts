import type { Operation, QueryParams, Sweep, SweepRequest, SweepReturns } from './operations.js'
import type { ApiClient } from './api-client.js'
import { FIRST_POLL_MS, pollUntilEnded, type WaitOptions } from './polling.js'

type RunsQuery = QueryParams<Operation<'/v1/backtest/sweeps/{id}/runs', 'get'>>

/** Parameter sweeps (POST /v1/backtest/sweeps …): one backtest per configuration, and the statistics of the search. */
export class SweepsApi {
  constructor(private readonly client: ApiClient) {}

  /** Queues a sweep; it starts as `queued` with progress 0 (202). */
  create(request: SweepRequest, signal?: AbortSignal): Promise<Sweep> {
    return this.client.post('/v1/backtest/sweeps', { body: request, ...(signal ? { signal } : {}) }) as Promise<Sweep>
  }

  /** One sweep with its result; at most one GET per sweep every 5 s, which wait() keeps. */
  get(id: string, signal?: AbortSignal): Promise<Sweep> {
    return this.client.get('/v1/backtest/sweeps/{id}', { path: { id }, ...(signal ? { signal } : {}) })
  }

  /** One page of the caller's sweeps, newest first. */
  list(query: QueryParams<Operation<'/v1/backtest/sweeps', 'get'>> = {}) {
    return this.client.get('/v1/backtest/sweeps', { query })
  }

  /** Every sweep matching the query, across pages. */
  iterate(query: Omit<QueryParams<Operation<'/v1/backtest/sweeps', 'get'>>, 'cursor'> = {}) {
    return this.client.iterate('/v1/backtest/sweeps', { query })
  }

  /** Cancels a queued or running sweep (409 INVALID_STATE once it has ended). */
  cancel(id: string, reason?: string): Promise<Sweep> {
    return this.client.post('/v1/backtest/sweeps/{id}/cancel', { path: { id }, body: reason === undefined ? {} : { reason } }) as Promise<Sweep>
  }

  /** One page of runs: in run order, or best first with sort: 'objective'. */
  runs(id: string, query: RunsQuery = {}) {
    return this.client.get('/v1/backtest/sweeps/{id}/runs', { path: { id }, query })
  }

  /** Every run, across pages. */
  iterateRuns(id: string, query: Omit<RunsQuery, 'cursor'> = {}) {
    return this.client.iterate('/v1/backtest/sweeps/{id}/runs', { path: { id }, query })
  }

  /** The T × N daily-returns matrix the statistics were computed from (a done sweep); with `runIds`, only those columns, in that order. */
  returns(id: string, options: { runIds?: readonly string[]; signal?: AbortSignal } = {}): Promise<SweepReturns> {
    const query = { format: 'json' as const, ...(options.runIds ? { run_ids: options.runIds.join(',') } : {}) }
    return this.client.get('/v1/backtest/sweeps/{id}/returns', { path: { id }, query, ...(options.signal ? { signal: options.signal } : {}) }) as Promise<SweepReturns>
  }

  /**
   * The matrix a page of columns at a time (at most 1,000 a request), in run order, following each answer's
   * `Link: <…>; rel="next"`: how a sweep of more than 1,000 runs is read whole (returns() refuses it).
   */
  async *returnsPages(id: string, options: { limit?: number; signal?: AbortSignal } = {}): AsyncGenerator<SweepReturns> {
    let cursor: string | undefined
    do {
      const query = { format: 'json' as const, limit: options.limit ?? 1000, ...(cursor ? { cursor } : {}) }
      const response = await this.client.send('get', '/v1/backtest/sweeps/{id}/returns', { path: { id }, query, ...(options.signal ? { signal: options.signal } : {}) })
      yield (await response.json()) as SweepReturns
      const next = /<([^>]+)>;\s*rel="next"/.exec(response.headers.get('link') ?? '')?.[1]
      cursor = next === undefined ? undefined : (new URL(next, 'http://x').searchParams.get('cursor') ?? undefined)
    } while (cursor !== undefined)
  }

  /** The same matrix as CSV: `date`, then one column per run id. */
  async returnsCsv(id: string, signal?: AbortSignal): Promise<string> {
    const response = await this.client.send('get', '/v1/backtest/sweeps/{id}/returns', { path: { id }, query: { format: 'csv' }, ...(signal ? { signal } : {}) })
    return response.text()
  }

  /** Queues a sweep and waits for its end: create(), a first poll after FIRST_POLL_MS, then wait()'s schedule. */
  async run(request: SweepRequest, options: WaitOptions<Sweep> = {}): Promise<Sweep> {
    const sweep = await this.create(request, options.signal)
    options.onProgress?.(sweep)
    return this.wait(sweep.id, { firstPollMs: FIRST_POLL_MS, ...options })
  }

  /** Polls a sweep until it is done, failed or cancelled (a failed one is returned, its `error` says why), as backtests' wait() does. */
  wait(id: string, options: WaitOptions<Sweep> = {}): Promise<Sweep> {
    return pollUntilEnded(this.client, (signal) => this.get(id, signal), options)
  }
}
