import type { Db } from '../../db/connect.js'
import { Coalescer } from '../../db/coalescer.js'
import { retryingTransaction } from '../../db/retry.js'
import { lockOwnedRuns, saveRunStates } from '../queries.js'
import { type OutcomeRows, writeOutcomes } from '../record-outcome.js'

/** One run's writes for one bar or step (or one booked fill): its outcome's rows (one per symbol of a many-symbol step) and the runner's state after it. */
export interface RunWrites {
  strategyId: string
  run: number
  rows: OutcomeRows | readonly OutcomeRows[]
  state: Record<string, unknown>
  /** The open time of the last bar the run acted on, or null before its first. */
  lastBarAt: Date | null
}

/** A run's commit: whether it was written (false: no longer this owner's), or why it failed. */
type Outcome = { owned: boolean } | { failed: unknown }

/**
 * Group commit for one runner pool's runs (over the shared Coalescer: one transaction in flight;
 * what runners hand in meanwhile goes into the next), one statement per kind of row (writeOutcomes) instead
 * of a transaction per runner. The first run of a bar is written at once and the rest of the bar's runners
 * while that commits, so the database thread works while the main thread still steps the others.
 *
 * Each run is fenced by its lease exactly as a runner's own transaction was: the transaction locks the
 * batch's strategy rows, then its run rows (docs/decisions/live.md, "Lock order": the order pause, deploy and
 * every other writer follow) and writes only the runs this owner still holds; the others
 * answer false and their runners stop, so a runner that lost its lease never writes. Everything a run's
 * writes hold (fill, trades, outbox events, stats, the next intent, stream NOTIFYs, state) commits or
 * rolls back together, and a runner awaits its commit before it sends an order. A deadlock or serialization
 * failure runs the transaction again (retryingTransaction); a batch that still fails is retried one run per
 * transaction, so one bad write fails only its own run.
 *
 * Measured (bench/live.ts, PGlite): a transaction per runner took ~3 ms per strategy-bar, so 1,000
 * strategies on a symbol were 1,000 sequential commits and p99 grew with N.
 */
export class RunCommits {
  private readonly batches: Coalescer<RunWrites, Outcome>

  constructor(
    private readonly db: Db,
    private readonly owner: string,
    /** False only where the database runs one transaction at a time (embedded): no lock order is needed there. */
    private readonly strategiesFirst = true,
  ) {
    this.batches = new Coalescer((writes) => this.writeRounds(writes))
  }

  /** Resolves true once the writes are committed, false when the run is no longer this owner's (nothing written). */
  async commit(writes: RunWrites): Promise<boolean> {
    const outcome = await this.batches.submit(writes)
    if ('failed' in outcome) throw outcome.failed
    return outcome.owned
  }

  /** One transaction per round with one entry per run: a run's later writes go into the next round (its runner awaits each, so this is rare). */
  private async writeRounds(writes: RunWrites[]): Promise<Outcome[]> {
    const outcomes: Outcome[] = new Array(writes.length)
    let left = writes.map((_, i) => i)
    while (left.length > 0) {
      const seen = new Set<string>()
      const round: number[] = []
      const later: number[] = []
      for (const i of left) {
        const key = runKey(writes[i]!)
        if (seen.has(key)) later.push(i)
        else {
          seen.add(key)
          round.push(i)
        }
      }
      const written = await this.write(round.map((i) => writes[i]!))
      round.forEach((i, k) => (outcomes[i] = written[k]!))
      left = later
    }
    return outcomes
  }

  /** Never rejects: each run gets its own outcome. */
  private async write(batch: RunWrites[]): Promise<Outcome[]> {
    let owned: Set<string>
    try {
      owned = await retryingTransaction(this.db, async (trx) => {
        const held = await lockOwnedRuns(trx, this.owner, batch, this.strategiesFirst)
        const mine = batch.filter((w) => held.has(runKey(w)))
        await writeOutcomes(trx, mine.flatMap((w) => rowsOf(w)))
        await saveRunStates(trx, mine.map((w) => ({ strategyId: w.strategyId, run: w.run, state: w.state, lastBarAt: w.lastBarAt })))
        return held
      })
    } catch (error) {
      if (batch.length === 1) return [{ failed: error }]
      const outcomes: Outcome[] = []
      for (const writes of batch) outcomes.push(...(await this.write([writes])))
      return outcomes
    }
    return batch.map((w) => ({ owned: owned.has(runKey(w)) }))
  }
}

function rowsOf(writes: RunWrites): readonly OutcomeRows[] {
  return 'closeIntent' in writes.rows ? [writes.rows] : writes.rows
}

function runKey(run: { strategyId: string; run: number }): string {
  return `${run.strategyId} ${run.run}`
}
