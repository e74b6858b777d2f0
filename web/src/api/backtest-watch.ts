import { api } from './endpoints.js'
import { findInPages, followInList, waitingOutRateLimit } from './polling.js'
import type { Job } from './types.js'

const TERMINAL = new Set(['done', 'failed', 'cancelled'])
export const isTerminal = (job: Job): boolean => TERMINAL.has(job.status)

/**
 * Progress is read from the job list, not GET /v1/backtest/jobs/{id}: the server lets one job be
 * read at most once per 5 s (spec Limits) while the list has only the weight budget (5 of 1200 a
 * minute), so a 2 s list poll shows progress smoothly and stays inside both (docs/decisions/dashboard-and-cli.md, "Dashboard (issue 14)").
 */
const LIST_POLL_MS = 2_000

const fullJobs = new Map<string, Job>()
const submitted = new Map<string, Job>()

/** Keeps the job a POST answered, so its page starts from it instead of spending the job's one GET per 5 s. */
export function rememberSubmitted(job: Job): void {
  submitted.set(job.id, job)
}

export function submittedJob(jobId: string): Job | undefined {
  return submitted.get(jobId)
}

/** The full job (equity curve and trades), waiting out a 429's Retry-After; done jobs never change, so they are kept. */
export async function fullJob(jobId: string, signal?: AbortSignal): Promise<Job> {
  const kept = fullJobs.get(jobId)
  if (kept) return kept
  const job = await waitingOutRateLimit(() => api.backtest(jobId), signal)
  if (isTerminal(job)) fullJobs.set(jobId, job)
  return job
}

/** Calls `onUpdate` with the job as it progresses, then once with the full terminal job; returns a stop function. */
export function watchBacktest(job: Job, onUpdate: (job: Job) => void, onError: (error: Error) => void): () => void {
  return followInList({
    first: job,
    everyMs: LIST_POLL_MS,
    // The job's row among the jobs submitted since it was.
    find: (id) => findInPages(id, (cursor) => api.listBacktests({ from: job.submitted_at, limit: 100, cursor })),
    ended: isTerminal,
    onUpdate,
    onError,
    finish: (ended, signal) => fullJob(ended.id, signal),
  })
}
