import type { BacktestJob } from '../../client/operations.js'
import { PerpetuaError } from '../../client/errors.js'
import type { PerpetuaClient } from '../../client/perpetua-client.js'
import type { CliContext } from '../context.js'

/** The longest Retry-After `backtest show` waits out; the server asks for at most 5 s (one poll per job every 5 s). */
const MAX_WAIT_MS = 10_000

/**
 * GET a job for `backtest show`. The API allows one read of a job every 5 s; a read right after
 * another (a `backtest run` that just ended, a second terminal) meets a 429 whose Retry-After says how
 * long to wait. It is waited out once, with a note on stderr, instead of failing; Ctrl-C stops it.
 */
export async function readJob(context: CliContext, client: PerpetuaClient, id: string): Promise<BacktestJob> {
  return readPolled(context, client, 'job', id, (signal) => client.backtests.get(id, signal))
}

/** readJob for anything read at most once every 5 s (a job, a sweep). */
export async function readPolled<T>(context: CliContext, client: PerpetuaClient, noun: 'job' | 'sweep', id: string, get: (signal?: AbortSignal) => Promise<T>): Promise<T> {
  try {
    return await get()
  } catch (error) {
    if (!(error instanceof PerpetuaError) || error.status !== 429) throw error
    const waitMs = error.retryAfterMs ?? 5000
    if (waitMs > MAX_WAIT_MS) throw error
    context.output.err(`${id} was read less than 5 s ago (the API allows one read of a ${noun} every 5 s): waiting ${Math.ceil(waitMs / 1000)} s`)
    const signal = context.interrupted()
    await client.sleep(waitMs, signal)
    return get(signal)
  }
}
