import crypto from 'node:crypto'
import type { PgBoss } from 'pg-boss'

/** Creates the handlers' queues (pg-boss needs a queue before its first send); creating one that exists changes nothing. */
export async function ensureQueues(boss: PgBoss, handlers: readonly { queue: string }[]): Promise<void> {
  for (const { queue } of handlers) {
    // No pg-boss retries: a lost run is found by our recovery (in seconds, not at pg-boss's expiry) and
    // handed to a new queue job, at most once (recover-lost.ts MAX_ATTEMPTS).
    await boss.createQueue(queue, { retryLimit: 0, expireInSeconds: 3600 })
    // createQueue drops the queue from pg-boss's metadata cache, and a send that misses the cache reads
    // it through pg-boss's own connection: inside our creating transaction that waits for the
    // transaction's own connection (PGlite is one session; tests use one connection) and deadlocks.
    // Any lookup of the queue refills the cache; pg-boss then refreshes it on its own every minute.
    await boss.getJobById(queue, crypto.randomUUID())
  }
}
