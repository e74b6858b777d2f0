import type { MaintenanceBracket } from '../../binance-formats/leverage-brackets.js'
import { endTime, firstAtOrAfter } from './recorded/bars.js'
import type { DataFiles, SampleKind } from './recorded/data-files.js'
import type { ExchangeInfoSnapshot, PremiumSnapshot, SymbolInfo } from './recorded/exchange-info.js'
import { DAY, nominalMs } from '../common/intervals.js'
import { lazy } from './recorded/lazy.js'
import { loadFunding, loadKlines, loadMarkKlines, loadMultiDaily, loadSamples } from './recorded/recorded.js'
import { priceAt } from './prices.js'
import { ScaledBars } from './recorded/scaled-bars.js'
import type { MarketSymbol, SampleSource, SourceRef } from './market-symbol.js'
import { seedOf, unit } from '../common/seeded.js'

/**
 * Every symbol the replay has market data for. Built on first use, because the daily file of ten
 * symbols has to be parsed to know which symbols are recorded; the big per-symbol series still load
 * only when a request reaches them.
 */
export class Market {
  private readonly build: () => Map<string, MarketSymbol>

  constructor(
    files: DataFiles,
    readonly exchangeInfo: ExchangeInfoSnapshot,
    readonly premium: PremiumSnapshot | undefined,
    /** Each symbol's margin tiers, from the data folder's snapshot (README "Accounts"). */
    readonly brackets: ReadonlyMap<string, readonly MaintenanceBracket[]> = new Map(),
  ) {
    this.build = lazy(() => buildSymbols(files, exchangeInfo, premium))
  }

  get(symbol: string): MarketSymbol | undefined {
    return this.build().get(symbol)
  }

  all(): MarketSymbol[] {
    return [...this.build().values()]
  }
}

function buildSymbols(files: DataFiles, exchangeInfo: ExchangeInfoSnapshot, premium: PremiumSnapshot | undefined): Map<string, MarketSymbol> {
  const recorded = new Map<string, SourceRef[]>()
  const add = (symbol: string, ref: SourceRef) => {
    const list = recorded.get(symbol) ?? []
    list.push(ref)
    recorded.set(symbol, list)
  }
  for (const k of files.klines) {
    add(k.symbol, { interval: k.interval, step: nominalMs(k.interval), from: k.from, to: k.to, bars: lazy(() => loadKlines(k.file, k.interval)) })
  }
  for (const file of files.multiDaily) {
    for (const [symbol, bars] of loadMultiDaily(file)) {
      if (recorded.get(symbol)?.some((ref) => ref.interval === '1d')) continue
      add(symbol, { interval: '1d', step: DAY, from: bars.time(0), to: bars.time(bars.length - 1) + DAY, bars: () => bars })
    }
  }
  const marks = new Map<string, SourceRef[]>()
  for (const k of files.markKlines) {
    const list = marks.get(k.symbol) ?? []
    list.push({ interval: k.interval, step: nominalMs(k.interval), from: k.from, to: k.to, bars: lazy(() => loadMarkKlines(k.file, k.interval)) })
    marks.set(k.symbol, list.sort((a, b) => a.step - b.step))
  }
  const samples = new Map<string, Map<SampleKind, SampleSource>>()
  for (const s of files.samples) {
    const map = samples.get(s.symbol) ?? new Map<SampleKind, SampleSource>()
    map.set(s.kind, { period: s.period, rows: lazy(() => loadSamples(s.file, s.kind)) })
    samples.set(s.symbol, map)
  }

  const out = new Map<string, MarketSymbol>()
  const recordedNames = [...recorded.keys()].filter((name) => exchangeInfo.symbols.get(name)?.status === 'TRADING').sort()
  for (const name of recordedNames) {
    const sources = recorded.get(name)!.sort((a, b) => a.step - b.step)
    const fundingFile = files.funding.get(name)
    out.set(name, {
      info: exchangeInfo.symbols.get(name)!,
      seed: seedOf(name),
      pathSeed: seedOf(name),
      origin: 'recorded',
      donor: undefined,
      sources,
      main: widest(sources),
      markSources: marks.get(name) ?? [],
      funding: lazy(() => (fundingFile ? loadFunding(fundingFile) : undefined)),
      samples: samples.get(name) ?? new Map(),
      snapshot: premium?.entries.get(name),
    })
  }
  if (recordedNames.length === 0) throw new Error(`replay exchange: no recorded klines for a trading symbol in ${files.dir}`)

  for (const info of exchangeInfo.symbols.values()) {
    if (info.status !== 'TRADING' || out.has(info.symbol)) continue
    out.set(info.symbol, deriveSymbol(info, out, recordedNames, exchangeInfo, premium))
  }
  return out
}

/** The source with the longest span; the coarser one when two span within a day of each other (sources ascend by interval). */
function widest(sources: SourceRef[]): SourceRef {
  return sources.reduce((best, s) => (s.to - s.from >= best.to - best.from - DAY ? s : best))
}

/**
 * An unrecorded trading symbol follows a recorded donor: the same base asset when one is recorded
 * (BTCUSDC follows BTCUSDT), else one picked by the symbol's hash. Prices are the donor's scaled so
 * the symbol's price at an anchor equals its real mark price in the premiumIndex snapshot (or, for
 * symbols listed after it, a level from its tick size); volumes are scaled to a seeded 24h quote volume.
 */
function deriveSymbol(
  info: SymbolInfo,
  recorded: Map<string, MarketSymbol>,
  recordedNames: string[],
  exchangeInfo: ExchangeInfoSnapshot,
  premium: PremiumSnapshot | undefined,
): MarketSymbol {
  const seed = seedOf(info.symbol)
  const sameBase = recordedNames.filter((name) => recorded.get(name)!.info.baseAsset === info.baseAsset)
  const donorName = sameBase.find((name) => name.endsWith('USDT')) ?? sameBase[0] ?? recordedNames[Math.floor(unit(seed, 1) * recordedNames.length)]!
  const donor = recorded.get(donorName)!
  const snapshot = premium?.entries.get(info.symbol)
  const anchorTime = snapshot ? premium!.time : exchangeInfo.serverTime
  // Tick sizes sit about 10^3.4 to 10^4.1 below the price (quartiles over the snapshot's symbols).
  const anchorPrice = snapshot ? snapshot.markPrice : info.tickSize * 10 ** (3.4 + 0.7 * unit(seed, 2))
  // 24h quote volume: log-uniform-ish from ~3M to ~1.6B USDT, median ~40M; USDC-quoted books are thinner.
  const quoteVolume = 10 ** (6.5 + 2.7 * unit(seed, 3) ** 1.3) * (info.quoteAsset === 'USDC' ? 0.1 : 1)
  const scales = lazy(() => {
    const bars = donor.main.bars()
    // On the donor's finest and main series only: a series between them (BTCUSDT 5m, 330k bars) would be
    // parsed for this one price, which made the first all-symbol premiumIndex 3.7 s instead of 0.7 s.
    const anchorSources = donor.sources.filter((ref, k) => k === 0 || ref === donor.main)
    const donorPrice = priceAt(donor, anchorTime, anchorSources) ?? bars.close(bars.length - 1)
    // The donor's turnover in the day before the anchor, or before its recording ends if that is earlier.
    const until = Math.min(anchorTime, endTime(bars))
    let donorQuote = 0
    for (let i = firstAtOrAfter(bars, until - DAY); i < bars.length && bars.time(i) < until; i++) {
      donorQuote += (bars.volume(i) * (bars.open(i) + bars.high(i) + bars.low(i) + bars.close(i))) / 4
    }
    const priceScale = anchorPrice / donorPrice
    return { priceScale, volumeScale: donorQuote > 0 ? quoteVolume / donorQuote / priceScale : 0 }
  })
  const listed = info.onboardDate
  const sources = donor.sources.map(
    (ref): SourceRef => ({
      interval: ref.interval,
      step: ref.step,
      from: Math.max(ref.from, listed - ref.step),
      to: ref.to,
      bars: lazy(() => new ScaledBars(ref.bars(), scales().priceScale, scales().volumeScale, info.tickSize, listed)),
    }),
  )
  return {
    info,
    seed,
    pathSeed: donor.pathSeed,
    origin: 'derived',
    donor: donorName,
    sources,
    // Trades are scheduled on the donor's coarsest series: its per-bar trade counts cost one number
    // per bar, so ~450 derived symbols over daily bars take ~7 MB where hourly ones took ~200 MB.
    main: sources[sources.length - 1]!,
    markSources: [],
    funding: () => undefined,
    samples: new Map(),
    snapshot,
  }
}
