import type { Db } from './connect.js'
import { isRetryableConflict } from './errors.js'

/** Attempts in all before a deadlock or serialization failure reaches the caller (a 500). */
const ATTEMPTS = 3

/**
 * Runs `work` in one transaction, and again (at most three attempts in all) when PostgreSQL aborts it for a
 * deadlock (40P01) or a serialization failure (40001): such a transaction rolled back whole, so running it
 * again is safe. Writers take their locks in one order (docs/decisions/live.md, "Lock order") so these should not
 * happen; this is the bound for what the order cannot rule out. Only database work belongs inside: a request
 * to the exchange is never retried here (an order is sent once, after its intent committed).
 */
export async function retryingTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work)
    } catch (error) {
      if (attempt >= ATTEMPTS || !isRetryableConflict(error)) throw error
      // A short random pause, so two transactions that met do not meet again at once.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt))
    }
  }
}
