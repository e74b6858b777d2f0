import type { HistorySource } from '../../backtests/history-store.js'
import type { ClosedBar } from '../brokers/broker.js'
import { MINUTE_MS, type MinuteKind } from '../brokers/exit-window.js'
import type { KlineStreams } from '../stream/kline-streams.js'
import type { MarkKlineSource } from './shared-history.js'

/**
 * One symbol's 1m bars as a dry run's protective exits examine them (DESIGN §10: inside the bar, on the
 * finest bars there are), bar by strategy bar:
 * - last price: the `<symbol>@kline_1m` stream (one socket per process, KlineStreams), buffered until their
 *   strategy bar is acted on; a bar whose minutes the stream did not all bring (its last minute may close a
 *   moment after the strategy bar's message, on its own socket; a reconnect, a restart mid-bar or a backfill
 *   lost the rest) reads them over REST in one page, the same klines a backtest stores;
 * - mark price: GET /fapi/v1/markPriceKlines for the closed bar, in one page (Binance streams mark prices as
 *   1 s ticks only, and minutes built from those ticks would not be the klines a backtest reads).
 * A bar is asked for once it closed by the exchange's clock (the runner acts on closed bars only), so every
 * minute read is final.
 */
export class RunMinutes {
  private readonly buffer = new Map<number, ClosedBar>()
  private readonly unsubscribe: (() => void) | undefined
  private readonly perBar: number

  constructor(
    private readonly deps: { streams: KlineStreams; history: HistorySource; markKlines: MarkKlineSource },
    readonly symbol: string,
    private readonly intervalMs: number,
    readonly kind: MinuteKind,
  ) {
    this.perBar = intervalMs / MINUTE_MS
    if (kind === 'last') {
      this.unsubscribe = deps.streams.subscribe(symbol, '1m', (event) => {
        if (event.type === 'closed') this.buffer.set(event.bar.openTime, event.bar)
      })
    }
  }

  /** The minutes of the strategy bar opening at `openTime`, ascending; those the exchange has (a missing one stays missing). */
  async of(openTime: number): Promise<ClosedBar[]> {
    const end = openTime + this.intervalMs
    this.forget(openTime)
    if (this.kind === 'last') {
      const held: ClosedBar[] = []
      for (let t = openTime; t < end; t += MINUTE_MS) {
        const bar = this.buffer.get(t)
        if (bar) held.push(bar)
      }
      if (held.length === this.perBar) return held
    }
    const rows = this.kind === 'last' ? await this.deps.history.klines(this.symbol, '1m', openTime, end - 1, this.perBar) : await this.deps.markKlines(this.symbol, '1m', openTime, end - 1, this.perBar)
    return rows.filter((row) => row.openTime >= openTime && row.openTime < end)
  }

  /** Drops the minutes before `openTime`: strategy bars are acted on in order, so none is asked for again. */
  forget(openTime: number): void {
    for (const t of this.buffer.keys()) if (t < openTime) this.buffer.delete(t)
  }

  close(): void {
    this.unsubscribe?.()
    this.buffer.clear()
  }
}
