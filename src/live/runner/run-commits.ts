import type { Db } from '../../db/connect.js'
import { GroupCommit } from '../../db/group-commit.js'
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
 * Group commit for one runner pool's runs (over the shared GroupCommit writer: one transaction in flight;
 * what runners hand in meanwhile goes into the next), one statement per kind of row (writeOutcomes) instead
 * of a transaction per runner. The first run of a bar is written at once and the rest of the bar's runners
 * while that commits, so the database thread works while the main thread still steps the others.
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
export class RunCommits {
  private readonly writer: GroupCommit<Waiting>

  constructor(
    private readonly db: Db,
    private readonly owner: string,
  ) {
    // writeBatch answers every runner itself; should it ever throw, its runners hear the error.
    this.writer = new GroupCommit((batch) => this.writeBatch(batch), 0, (error, items) => {
      for (const waiting of items) waiting.reject(error)
    })
  }

  /** Resolves true once the writes are committed, false when the run is no longer this owner's (nothing written). */
  commit(writes: RunWrites): Promise<boolean> {
    return new Promise((resolve, reject) => this.writer.add({ writes, resolve, reject }))
  }

  /** One entry per run in a transaction: a run's later writes go into the next (its runner awaits each, so this is rare). */
  private async writeBatch(items: Waiting[]): Promise<void> {
    const seen = new Set<string>()
    const batch: Waiting[] = []
    const later: Waiting[] = []
    for (const waiting of items) {
      const key = runKey(waiting.writes)
      if (seen.has(key)) later.push(waiting)
      else {
        seen.add(key)
        batch.push(waiting)
      }
    }
    await this.write(batch)
    // Added while this write is still in flight, so they go into the next.
    for (const waiting of later) this.writer.add(waiting)
  }

  /** Never rejects: each waiting runner hears its own outcome. */
  private async write(batch: Waiting[]): Promise<void> {
    let owned: Set<string>
    try {
      owned = await this.db.transaction().execute(async (trx) => {
        const held = await lockOwnedRuns(trx, this.owner, batch.map((w) => w.writes))
        const mine = batch.map((w) => w.writes).filter((w) => held.has(runKey(w)))
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
    for (const waiting of batch) waiting.resolve(owned.has(runKey(waiting.writes)))
  }
}

function runKey(run: { strategyId: string; run: number }): string {
  return `${run.strategyId} ${run.run}`
}
