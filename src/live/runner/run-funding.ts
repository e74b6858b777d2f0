import type { HistorySource } from '../../backtests/history-store.js'
import type { FundingEvent } from '../brokers/broker.js'

const HOUR = 3_600_000

/**
 * One symbol's funding events as a run needs them: read over REST when a bar holds an hour boundary
 * (settlements are on the hour), from where the last read ended, so every event reaches the run once.
 */
export class RunFunding {
  private fetchedThrough = 0

  constructor(
    private readonly history: HistorySource,
    readonly symbol: string,
    private readonly intervalMs: number,
  ) {}

  /** Funding events up to the close of the bar opening at `openTime`, read when the bar holds an hour boundary. */
  async forBar(openTime: number): Promise<FundingEvent[]> {
    const end = openTime + this.intervalMs
    const crossesHour = Math.floor((end - 1) / HOUR) !== Math.floor((openTime - 1) / HOUR)
    if (!crossesHour || end <= this.fetchedThrough) return []
    // The last hour for every runner (one shared request per symbol), kept from where this run's last read ended.
    const through = this.fetchedThrough
    return (await this.read(openTime - HOUR, end)).filter((f) => f.time >= through)
  }

  /** Events with from ≤ time < to (one page). */
  async read(from: number, to: number): Promise<FundingEvent[]> {
    const rows = await this.history.fundingRates(this.symbol, from, to - 1, 1000)
    this.fetchedThrough = Math.max(this.fetchedThrough, to)
    return rows.map((r) => ({ time: r.fundingTime, rate: r.fundingRate, markPrice: r.markPrice ?? Number.NaN }))
  }
}
