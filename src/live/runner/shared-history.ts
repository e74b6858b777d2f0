import type { FundingRow, HistorySource, KlineRow } from '../../backtests/history-store.js'
import type { MarkPriceBar } from '../../market/mark-price-klines.js'

/** Mark-price klines of one symbol and interval with open times in [startTime, endTime] (GET /fapi/v1/markPriceKlines). */
export type MarkKlineSource = (symbol: string, interval: string, startTime: number, endTime: number, limit: number) => Promise<MarkPriceBar[]>

/**
 * One runner pool's REST history reads, shared: a request identical to one in flight or answered in
 * the last `ttlMs` is not sent again. Runners of one symbol claimed together warm up over the same
 * window and backfill the same bars, so N runners cost one request per symbol instead of N. Measured
 * (bench/live.ts): unshared, a warm-up cost 12 weight (klines 10, time 1, funding 1) and 138 of 250 runners
 * spent the 2,400-a-minute budget; the rest failed to start. Callers must not mutate the rows.
 */
export class SharedHistory implements HistorySource {
  private readonly answers = new Map<string, { at: number; value: Promise<unknown> }>()

  constructor(
    private readonly source: HistorySource,
    private readonly ttlMs = 10_000,
    private readonly now: () => number = () => performance.now(),
    /** Where mark-price klines come from (dry runs whose exits trigger on the mark price). */
    private readonly marks?: MarkKlineSource,
  ) {}

  klines(symbol: string, interval: string, startTime: number, endTime: number, limit: number): Promise<KlineRow[]> {
    return this.shared(`k ${symbol} ${interval} ${startTime} ${endTime} ${limit}`, () => this.source.klines(symbol, interval, startTime, endTime, limit))
  }

  fundingRates(symbol: string, startTime: number, endTime: number, limit: number): Promise<FundingRow[]> {
    return this.shared(`f ${symbol} ${startTime} ${endTime} ${limit}`, () => this.source.fundingRates(symbol, startTime, endTime, limit))
  }

  /** Mark-price klines, shared as klines are: the runs of a symbol with mark-triggered exits ask for the same minutes at each close. */
  markKlines(symbol: string, interval: string, startTime: number, endTime: number, limit: number): Promise<MarkPriceBar[]> {
    const marks = this.marks
    if (!marks) return Promise.reject(new Error('this history has no source of mark-price klines'))
    return this.shared(`m ${symbol} ${interval} ${startTime} ${endTime} ${limit}`, () => marks(symbol, interval, startTime, endTime, limit))
  }

  private shared<T>(key: string, load: () => Promise<T>): Promise<T> {
    const now = this.now()
    for (const [k, answer] of this.answers) {
      if (now - answer.at <= this.ttlMs) break // insertion order: the rest are newer
      this.answers.delete(k)
    }
    const known = this.answers.get(key)
    if (known) return known.value as Promise<T>
    const value = load()
    this.answers.set(key, { at: now, value })
    // A failure is not kept: the next caller asks again.
    value.catch(() => {
      if (this.answers.get(key)?.value === value) this.answers.delete(key)
    })
    return value
  }
}

/**
 * The exchange's clock for a pool's runners: one GET /fapi/v1/time answers every caller in flight and
 * for `ttlMs` after, so runners started together warm up to the same boundary (and share their reads).
 * A reused answer is at most `ttlMs` behind, never ahead: a warm-up that ends a bar early backfills it.
 */
export function sharedClock(read: () => Promise<number>, ttlMs = 1_000, now: () => number = () => performance.now()): () => Promise<number> {
  let last: { at: number; value: Promise<number> } | undefined
  return () => {
    const at = now()
    if (last && at - last.at <= ttlMs) return last.value
    const value = read()
    const entry = { at, value }
    last = entry
    value.catch(() => {
      if (last === entry) last = undefined
    })
    return value
  }
}
