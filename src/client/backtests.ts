import { FIRST_POLL_MS, pollUntilEnded, type WaitOptions } from './polling.js'
import type { BacktestCoverage, BacktestJob, BacktestRequest, Operation, QueryParams } from './operations.js'
import type { ApiClient } from './api-client.js'


export class BacktestsApi {
  constructor(private readonly client: ApiClient) {}

  /** Queues a job (POST /v1/backtest/jobs); it starts as `queued` with progress 0. */
  create(request: BacktestRequest, signal?: AbortSignal): Promise<BacktestJob> {
    return this.client.post('/v1/backtest/jobs', { body: request, ...(signal ? { signal } : {}) }) as Promise<BacktestJob>
  }

  /** One job with its whole result. Mind the spec's limit of one GET per job every 5 s: wait() keeps it. */
  get(id: string, signal?: AbortSignal): Promise<BacktestJob> {
    return this.client.get('/v1/backtest/jobs/{id}', { path: { id }, ...(signal ? { signal } : {}) })
  }

  /** One page of the caller's jobs, newest first (results carry metrics only). */
  list(query: QueryParams<Operation<'/v1/backtest/jobs', 'get'>> = {}) {
    return this.client.get('/v1/backtest/jobs', { query })
  }

  /** Every job matching the query, across pages. */
  iterate(query: Omit<QueryParams<Operation<'/v1/backtest/jobs', 'get'>>, 'cursor'> = {}) {
    return this.client.iterate('/v1/backtest/jobs', { query })
  }

  /**
   * The range of bars the exchange holds for a symbol and timeframe (GET /v1/backtest/coverage):
   * `start` the first bar's open, `end` the last closed bar's close, both null when there is none. A
   * job whose range holds no bar ends failed with NO_DATA; a partly covered one lists result.warnings.
   */
  coverage(query: QueryParams<Operation<'/v1/backtest/coverage', 'get'>>, signal?: AbortSignal): Promise<BacktestCoverage> {
    return this.client.get('/v1/backtest/coverage', { query, ...(signal ? { signal } : {}) })
  }

  /** Cancels a queued or running job (409 INVALID_STATE once it is terminal). */
  cancel(id: string, reason?: string): Promise<BacktestJob> {
    return this.client.post('/v1/backtest/jobs/{id}/cancel', { path: { id }, body: reason === undefined ? {} : { reason } }) as Promise<BacktestJob>
  }

  /** Queues a job and waits for its end: create(), a first poll after FIRST_POLL_MS, then wait()'s schedule. */
  async run(request: BacktestRequest, options: WaitOptions = {}): Promise<BacktestJob> {
    const job = await this.create(request, options.signal)
    options.onProgress?.(job)
    return this.wait(job.id, { firstPollMs: FIRST_POLL_MS, ...options })
  }

  /**
   * Polls a job until it is done, failed or cancelled, and returns it in that state (a failed job is
   * returned, not thrown: its `error` says why). As the spec asks: never more often than every 5 s,
   * backing off for long jobs, and after a 429 not before its Retry-After. Network failures and
   * 502/503/504 are retried (5 in a row end the wait); any other error is thrown.
   */
  wait(id: string, options: WaitOptions = {}): Promise<BacktestJob> {
    return pollUntilEnded(this.client, (signal) => this.get(id, signal), options)
  }
}
