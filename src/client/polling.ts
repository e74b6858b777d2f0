import { PerpetuaError } from './errors.js'
import type { BacktestJob } from './operations.js'
import type { ApiClient } from './api-client.js'

/** The spec's limit: poll one job (or sweep) at most once every 5 seconds. */
export const MIN_POLL_INTERVAL_MS = 5000
const TERMINAL = new Set(['done', 'failed', 'cancelled'])
/**
 * run()'s first poll, this long after the job is queued. Queuing does not count against the polling
 * limit (the server starts a job's 5 s at its first GET), so one early look returns the many jobs that
 * finish in under a second at once; the polls after it keep the 5 s.
 */
export const FIRST_POLL_MS = 750

export interface WaitOptions<T = BacktestJob> {
  /** Wait between polls, ms: at least 5000 (the spec's limit; a smaller value throws), default 5000. */
  intervalMs?: number
  /** Polling stays at intervalMs this long (ms of waiting), then backs off; default 60 000. */
  backoffAfterMs?: number
  /** Each later wait is the previous one times this (≥ 1), default 1.5 … */
  backoff?: number
  /** … up to this many ms, default 30 000 (never below intervalMs). */
  maxIntervalMs?: number
  /** Wait this long before the first poll, ms (default 0; run() uses FIRST_POLL_MS). */
  firstPollMs?: number
  /** Called with the job (or sweep) after every successful poll (status and progress in [0, 1]). */
  onProgress?: (job: T) => void
  /** Stops waiting (the job keeps running; cancel() stops it). */
  signal?: AbortSignal
}

/** Answers without a result that a later poll may not repeat: the server's or the network's, not the request's. */
const TRANSIENT = new Set([0, 502, 503, 504])
const MAX_TRANSIENT_FAILURES = 5

/**
 * Polls `get` until what it reads is done, failed or cancelled, and returns it in that state: never
 * more often than every 5 s, backing off for long waits, and after a 429 not before its Retry-After.
 * Network failures and 502/503/504 are retried (5 in a row end the wait); any other error is thrown.
 */
export async function pollUntilEnded<T extends { status: string }>(client: ApiClient, get: (signal?: AbortSignal) => Promise<T>, options: WaitOptions<T> = {}): Promise<T> {
  const interval = options.intervalMs ?? MIN_POLL_INTERVAL_MS
  if (!(interval >= MIN_POLL_INTERVAL_MS)) throw new RangeError(`intervalMs must be at least ${MIN_POLL_INTERVAL_MS} (the spec's polling limit), not ${interval}`)
  const backoff = options.backoff ?? 1.5
  if (!(backoff >= 1)) throw new RangeError(`backoff must be at least 1, not ${backoff}`)
  const maxInterval = Math.max(interval, options.maxIntervalMs ?? 30_000)
  const backoffAfter = options.backoffAfterMs ?? 60_000
  let next = interval
  let waited = 0
  let failures = 0
  const pause = async (ms: number) => {
    await client.sleep(ms, options.signal)
    waited += ms
  }
  if (options.firstPollMs !== undefined && options.firstPollMs > 0) await pause(options.firstPollMs)
  for (;;) {
    options.signal?.throwIfAborted()
    let job: T
    try {
      job = await get(options.signal)
      failures = 0
    } catch (error) {
      if (!(error instanceof PerpetuaError)) throw error
      if (error.status === 429) {
        await pause(Math.max(error.retryAfterMs ?? next, next))
        continue
      }
      if (!TRANSIENT.has(error.status) || ++failures >= MAX_TRANSIENT_FAILURES) throw error
      await pause(Math.max(error.retryAfterMs ?? next, next))
      continue
    }
    options.onProgress?.(job)
    if (TERMINAL.has(job.status)) return job
    await pause(next)
    if (waited >= backoffAfter) next = Math.min(maxInterval, Math.round(next * backoff))
  }
}
