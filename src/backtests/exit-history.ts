import type { Db } from '../db/connect.js'
import type { BarSeries, DetailBars } from '../engine/index.js'
import type { KlineKind } from '../market/archive/archive-files.js'
import type { MarketData } from '../market/market-data.js'
import type { Exits } from '../strategies/exits.js'
import { TIMEFRAME_MS, TIMEFRAMES, type Timeframe } from '../strategies/timeframes.js'
import type { HistoryCaches } from '../work/history-cache.js'
import { heldWithin, isoMinute, NoData } from './coverage.js'
import { type ArchiveSource, type HistorySource, loadBars } from './history-store.js'
import { concatBars } from './kline-codec.js'

/** The prices protective exits are checked against (ExitRules.trigger). */
export type ExitTrigger = 'last' | 'mark'

/**
 * The trigger whose bars a run needs, or undefined for a run without protective exits: a config's
 * `exits`, else last prices when the caller knows the run protects positions anyway (a sweep whose grid
 * varies `exits.*`, a user's module that states levels), which the config alone does not say.
 */
export function exitTrigger(exits: Exits | undefined, protective: boolean): ExitTrigger | undefined {
  if (exits !== undefined) return exits.trigger ?? 'last'
  return protective ? 'last' : undefined
}

/**
 * The timeframes whose bars tile a `timeframe` bar, finest first: the finer ones for last prices (the
 * strategy's own bars are already there), down to the strategy's own for mark prices (there is no
 * mark-price series otherwise). Every timeframe below another in TIMEFRAMES divides it; the check keeps
 * that true if the list grows.
 */
export function detailTimeframes(timeframe: Timeframe, trigger: ExitTrigger): Timeframe[] {
  const ms = TIMEFRAME_MS[timeframe]
  return TIMEFRAMES.filter((tf) => ms % TIMEFRAME_MS[tf] === 0 && (trigger === 'mark' ? TIMEFRAME_MS[tf] <= ms : TIMEFRAME_MS[tf] < ms))
}

/** Where a job's bars come from: the store through this node's caches, else the archive and REST. */
export interface DetailSources {
  db: Db
  market: MarketData
  history: HistorySource
  caches: HistoryCaches
  archive?: ArchiveSource
  /** The exchange's clock. */
  now: number
}

/** A symbol's strategy bars, as loaded: only their span matters here. */
interface StrategySeries {
  symbol: string
  intervalMs: number
  openTime: Float64Array
}

/**
 * Per symbol, the bars its protective exits are examined on (the engine's DetailBars): last-price bars
 * of the timeframes finer than the strategy's, or mark-price bars down to the strategy's own. From the
 * finest, each timeframe loads the whole strategy bars of the symbol's span that the exchange holds of it
 * and no finer timeframe already holds (heldWithin: two cached questions), through the store like the
 * strategy bars: on the replay a 1h job over 2024 loads 5m bars only, never pages for 1m bars that did
 * not exist yet, and a job straddling 2025-05-04 gets 5m bars before and 1m after. A span one timeframe
 * holds with gaps inside is not filled from a coarser one: those strategy bars are examined on
 * themselves, and exit_resolution says so. Symbols without strategy bars get none (their job fails
 * NO_DATA for those). Trigger 'mark' and a symbol without any mark-price bar: NoData naming it, never a
 * silent run on last prices.
 */
export async function loadDetail(sources: DetailSources, strategy: readonly StrategySeries[], timeframe: Timeframe, trigger: ExitTrigger): Promise<(DetailBars | undefined)[]> {
  const detail: (DetailBars | undefined)[] = []
  for (const series of strategy) {
    const n = series.openTime.length
    if (n === 0) {
      detail.push(undefined)
      continue
    }
    const span: [number, number] = [series.openTime[0]!, series.openTime[n - 1]! + series.intervalMs]
    if (trigger === 'last') {
      detail.push({ bars: await finerBars(sources, series.symbol, series.intervalMs, span, detailTimeframes(timeframe, trigger), 'klines') })
      continue
    }
    const mark = await finerBars(sources, series.symbol, series.intervalMs, span, detailTimeframes(timeframe, trigger), 'markPriceKlines')
    if (mark.length === 0) {
      throw new NoData(
        `no ${series.symbol} mark-price bars between ${isoMinute(span[0])} and ${isoMinute(span[1])}: exits with trigger "mark" are judged on mark prices, never on last prices instead. Choose trigger "last" or a range with mark-price klines.`,
      )
    }
    detail.push({ mark })
  }
  return detail
}

/** One symbol's series of `kind`, finest timeframe first, each over the strategy bars no finer series holds. */
async function finerBars(sources: DetailSources, symbol: string, intervalMs: number, span: [number, number], timeframes: Timeframe[], kind: KlineKind): Promise<BarSeries[]> {
  let open: [number, number][] = [span]
  const series: BarSeries[] = []
  for (const timeframe of timeframes) {
    if (open.length === 0) break
    const held = await heldWithin(sources.market.session(), symbol, timeframe, open[0]![0], open[open.length - 1]![1], kind)
    if (!held) continue
    // Whole strategy bars: the engine examines a strategy bar on a series only when it holds every bar inside it.
    const whole: [number, number] = [Math.ceil(held.start / intervalMs) * intervalMs, Math.floor(held.end / intervalMs) * intervalMs]
    const parts = intersect(open, whole)
    if (parts.length === 0) continue
    open = subtract(open, whole)
    const ms = TIMEFRAME_MS[timeframe]
    const loaded = []
    for (const [from, to] of parts) {
      // `end` is inclusive: to − 1 asks for [from, to) exactly, so a whole month is one archive file.
      const request = { symbol, interval: timeframe, intervalMs: ms, start: from, end: to - 1, now: sources.now, kind }
      loaded.push(await loadBars(sources.db, sources.history, sources.caches, request, sources.archive))
    }
    // Exactly their bars, in shared memory, as the engine and the engine threads take them (loadBars's already are).
    const columns = loaded.length === 1 ? loaded[0]! : concatBars(loaded, { shared: true })
    if (columns.openTime.length > 0) series.push({ symbol, intervalMs: ms, ...columns })
  }
  return series
}

/** The parts of the sorted, disjoint spans `open` inside [a, b). */
function intersect(open: [number, number][], [a, b]: [number, number]): [number, number][] {
  return open.flatMap(([from, to]): [number, number][] => (Math.max(from, a) < Math.min(to, b) ? [[Math.max(from, a), Math.min(to, b)]] : []))
}

/** The parts of the sorted, disjoint spans `open` outside [a, b). */
function subtract(open: [number, number][], [a, b]: [number, number]): [number, number][] {
  return open.flatMap(([from, to]): [number, number][] => {
    if (b <= from || a >= to) return [[from, to]]
    const left: [number, number][] = from < a ? [[from, a]] : []
    return to > b ? [...left, [b, to]] : left
  })
}
