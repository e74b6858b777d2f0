import type { FastifyReply } from 'fastify'
import { AppError } from './errors.js'
import type { Claim, SharedState } from './shared-state.js'
import { andThen, type Soon } from './soon.js'

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
 * claim is made in the same round trip and a failed one throws `refused()` without charging. Done at
 * once (no promise) when the shared state answers at once (soon.ts); a refusal is then thrown, not rejected.
 */
export function chargeWeight(
  reply: FastifyReply,
  budget: Budget,
  bucket: string,
  weight: number,
  versioned: boolean,
  claim?: { claim: Claim; refused: () => Error },
): Soon<void> {
  const now = budget.now()
  return andThen(budget.shared.admit(claim?.claim, { bucket, weight, windowMs: WINDOW_MS }, now), (admitted) => {
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
  })
}

/**
 * One poll of `key` (a job or a sweep) per `intervalMs` (spec "Limits"). A repeat inside that time is
 * 429 whose Retry-After is the whole seconds left until the next poll is allowed: it used to be the
 * full interval always, so a client polling 4 s after its last poll was told to wait 5 s more, not 1.
 * The RateLimit fields of that answer add the poll policy to the weight budget's (both are lists of
 * policies, IETF draft-ietf-httpapi-ratelimit-headers), spent, resetting when Retry-After says.
 */
export async function claimPoll(shared: SharedState, key: string, intervalMs: number, now: number, what: 'job' | 'sweep'): Promise<void> {
  const waitMs = await shared.claimOrWait(key, intervalMs, now)
  if (waitMs === 0) return
  const seconds = Math.max(1, Math.ceil(waitMs / 1000))
  throw new AppError('RATE_LIMITED', `poll a ${what} at most once every ${intervalMs / 1000} s; retry in ${seconds} s; back off exponentially for long ${what}s`, {
    headers: { 'retry-after': String(seconds), 'ratelimit-policy': `"poll";q=1;w=${intervalMs / 1000}`, ratelimit: `"poll";r=0;t=${seconds}` },
  })
}
