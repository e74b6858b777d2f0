import crypto from 'node:crypto'
import type { PgBoss } from 'pg-boss'

/**
 * Every queue's settings. A message is normally ended by our own fence: a run lost mid-way is found by
 * recovery (recover-lost.ts, in seconds) and handed to a new message at the next attempt. What recovery
 * cannot see is a message a worker took and died with before its claim committed (or whose claim failed):
 * the work is still `queued` at that attempt, and the message sat `active` on a dead process until its
 * expiry (an hour), so the job or sweep never ended. pg-boss's heartbeat covers that window: a message
 * whose worker stops touching it (every 5 s while its handler runs) fails after HEARTBEAT_SECONDS and is
 * retried, and the retry's claim takes the work exactly when no run holds it (a retry of a message whose
 * work was already handed on, or is running, claims nothing).
 */
export const HEARTBEAT_SECONDS = 10
const QUEUE_SETTINGS = { retryLimit: 3, retryDelay: 0, heartbeatSeconds: HEARTBEAT_SECONDS, expireInSeconds: 3600 }

/** Creates the handlers' queues (pg-boss needs a queue before its first send), and brings an existing one to today's settings. */
export async function ensureQueues(boss: PgBoss, handlers: readonly { queue: string }[]): Promise<void> {
  for (const { queue } of handlers) {
    await boss.createQueue(queue, QUEUE_SETTINGS)
    // createQueue leaves a queue that exists as it was: a store made before the heartbeat gets it here.
    await boss.updateQueue(queue, QUEUE_SETTINGS)
    // createQueue drops the queue from pg-boss's metadata cache, and a send that misses the cache reads
    // it through pg-boss's own connection: inside our creating transaction that waits for the
    // transaction's own connection (PGlite is one session; tests use one connection) and deadlocks.
    // Any lookup of the queue refills the cache; pg-boss then refreshes it on its own every minute.
    await boss.getJobById(queue, crypto.randomUUID())
  }
}
