import type { Db } from '../../db/connect.js'
import { lockOwnedRuns, saveRunStates } from '../queries.js'
import { type OutcomeRows, writeOutcomes } from '../record-outcome.js'

/** One run's writes for one bar (or one booked fill): its outcome's rows and the runner's state after it. */
export interface RunWrites {
  strategyId: string
  run: number
  rows: OutcomeRows
  state: Record<string, unknown>
}

interface Waiting {
  writes: RunWrites
  resolve: (owned: boolean) => void
  reject: (error: unknown) => void
}

/**
 * Group commit for one runner pool: the writes runners hand in while a transaction is in flight, or in
 * the same turn of the event loop (every runner of a closed bar), go into the next transaction together,
 * one statement per kind of row (writeOutcomes) instead of a transaction per runner.
 *
 * Each run is fenced by its lease exactly as a runner's own transaction was: the transaction locks the
 * batch's run rows (FOR UPDATE, in key order) and writes only those this owner still holds; the others
 * answer false and their runners stop, so a runner that lost its lease never writes. Everything a run's
 * writes hold (fill, trades, outbox events, stats, the next intent, stream NOTIFYs, state) commits or
 * rolls back together, and a runner awaits its commit before it sends an order. A batch that fails is
 * retried one run per transaction, so one bad write (or a deadlock with a pause) fails only its own run.
 *
 * Measured (bench/live.ts, PGlite): a transaction per runner took ~3 ms per strategy-bar, so 1,000
 * strategies on a symbol were 1,000 sequential commits and p99 grew with N.
 */
export class GroupCommit {
  private queue: Waiting[] = []
  private scheduled = false
  private flushing = false

  constructor(
    private readonly db: Db,
    private readonly owner: string,
  ) {}

  /** Resolves true once the writes are committed, false when the run is no longer this owner's (nothing written). */
  commit(writes: RunWrites): Promise<boolean> {
    return new Promise((resolve, reject) => {
      this.queue.push({ writes, resolve, reject })
      if (this.scheduled || this.flushing) return
      this.scheduled = true
      // After the current turn: every runner of a bar's messages has handed its writes in by then.
      setImmediate(() => {
        this.scheduled = false
        void this.flush()
      })
    })
  }

  private async flush(): Promise<void> {
    this.flushing = true
    try {
      while (this.queue.length > 0) {
        // One entry per run in a transaction (a run's later writes wait for the next one; a runner awaits each).
        const seen = new Set<string>()
        const batch: Waiting[] = []
        const later: Waiting[] = []
        for (const waiting of this.queue) {
          const key = `${waiting.writes.strategyId} ${waiting.writes.run}`
          if (seen.has(key)) later.push(waiting)
          else {
            seen.add(key)
            batch.push(waiting)
          }
        }
        this.queue = later
        await this.write(batch)
      }
    } finally {
      this.flushing = false
    }
  }

  private async write(batch: Waiting[]): Promise<void> {
    let owned: Set<string>
    try {
      owned = await this.db.transaction().execute(async (trx) => {
        const held = await lockOwnedRuns(trx, this.owner, batch.map((w) => w.writes))
        const mine = batch.map((w) => w.writes).filter((w) => held.has(`${w.strategyId} ${w.run}`))
        await writeOutcomes(trx, mine.map((w) => w.rows))
        await saveRunStates(trx, mine.map((w) => ({ strategyId: w.strategyId, run: w.run, state: w.state })))
        return held
      })
    } catch (error) {
      if (batch.length === 1) {
        batch[0]!.reject(error)
        return
      }
      for (const waiting of batch) await this.write([waiting])
      return
    }
    for (const waiting of batch) waiting.resolve(owned.has(`${waiting.writes.strategyId} ${waiting.writes.run}`))
  }
}
