import type { Bars } from './recorded/bars.js'
import type { SampleKind } from './recorded/data-files.js'
import type { PremiumSnapshotEntry, SymbolInfo } from './recorded/exchange-info.js'
import type { Interval } from '../common/intervals.js'
import type { FundingRows, SampleRows } from './recorded/recorded.js'

/** One kline series a symbol can be served from; `bars()` loads it on first use. */
export interface SourceRef {
  interval: Interval
  step: number
  /** Span known before loading (from the file name); exact once loaded. */
  from: number
  to: number
  bars: () => Bars
}

export interface SampleSource {
  period: string
  rows: () => SampleRows
}

/** A symbol with market data: recorded klines, or a scaled view of a donor's (see README "Derived values"). */
export interface MarketSymbol {
  info: SymbolInfo
  /** Seeds the symbol's own derived values (trade sizes, ratios, funding noise). */
  seed: number
  /** Seeds the intra-bar price path: the donor's for derived symbols, so they move with it. */
  pathSeed: number
  origin: 'recorded' | 'derived'
  /** For derived symbols: the recorded symbol whose price moves it follows. */
  donor: string | undefined
  /** Ascending by interval. */
  sources: SourceRef[]
  /** The widest-spanning source: trades are scheduled on it. */
  main: SourceRef
  /** Recorded mark-price klines, ascending by interval (none for most symbols: their mark is derived). */
  markSources: SourceRef[]
  funding: () => FundingRows | undefined
  samples: Map<SampleKind, SampleSource>
  /** The premium snapshot's row for this symbol, if any (real funding for one period). */
  snapshot: PremiumSnapshotEntry | undefined
}
