import { exchangeOffset, metrics, modeOf, secondsSince } from '../../ops/registry.js'

/**
 * perpetua_run_decision_seconds for one runner: from a bar's close to the commit of the run's decision on it, on
 * the exchange's clock (the runner's plus the offset last read: ops/registry.ts). Observed once per bar, from the first bar after the warm-up on: the warm-up's and a
 * resumed state's bars were decided before this runner, and a booking between bars (a fill from the user
 * stream) commits no new bar. A bar backfilled after a gap is observed late, as it was decided late.
 */
export class DecisionLatency {
  private decided = Number.NaN
  private readonly labels: { mode: string }

  constructor(
    dryRun: boolean,
    private readonly intervalMs: number,
    private readonly now: () => number,
  ) {
    this.labels = { mode: modeOf(dryRun) }
  }

  /** The runner is warm: bars up to `lastOpenTime` (NaN: none yet) are not its decisions to time. */
  warm(lastOpenTime: number): void {
    this.decided = lastOpenTime === lastOpenTime ? lastOpenTime : Number.NEGATIVE_INFINITY
  }

  /** A commit of the run's state, whose last bar opened at `lastOpenTime`, is durable. */
  committed(lastOpenTime: number): void {
    if (!(lastOpenTime > this.decided)) return // not warm yet (NaN), or no new bar
    this.decided = lastOpenTime
    metrics.runDecision.observe(this.labels, secondsSince(lastOpenTime + this.intervalMs, this.now() + exchangeOffset()))
  }
}
