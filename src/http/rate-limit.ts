import type { FastifyReply } from 'fastify'
import { AppError } from './errors.js'
import type { Claim, SharedState } from './shared-state.js'

const WINDOW_MS = 60_000

export interface Budget {
  limit: number
  shared: SharedState
  now: () => number
}

/**
 * Charges `weight` to `bucket` in the current one-minute window, sets the usage headers of DESIGN §5
 * (X-Service-Used-Weight-1M and the IETF RateLimit-Policy / RateLimit fields) and throws 429 with
 * Retry-After once the window's budget is spent. With `claim` (a signature's replay claim), the
 * claim is made in the same round trip and a failed one throws `refused()` without charging.
 */
export async function chargeWeight(
  reply: FastifyReply,
  budget: Budget,
  bucket: string,
  weight: number,
  versioned: boolean,
  claim?: { claim: Claim; refused: () => Error },
): Promise<void> {
  const now = budget.now()
  const admitted = await budget.shared.admit(claim?.claim, { bucket, weight, windowMs: WINDOW_MS }, now)
  if (!admitted.claimed) throw claim!.refused()
  const used = admitted.used!
  const resetSeconds = Math.max(1, Math.ceil((WINDOW_MS - (now % WINDOW_MS)) / 1000))
  const remaining = Math.max(0, budget.limit - used)
  if (versioned) reply.header('x-service-used-weight-1m', String(used))
  reply.header('ratelimit-policy', `"default";q=${budget.limit};w=${WINDOW_MS / 1000}`)
  reply.header('ratelimit', `"default";r=${remaining};t=${resetSeconds}`)
  if (used > budget.limit) {
    throw new AppError('RATE_LIMITED', `weight budget of ${budget.limit} per minute exceeded; retry in ${resetSeconds} s`, {
      headers: { 'retry-after': String(resetSeconds) },
    })
  }
}
