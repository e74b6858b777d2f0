import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { BINANCE_BTCUSDT_BRACKETS } from '../../src/binance-formats/leverage-brackets.js'
import { type BacktestInput, type BacktestResult, type BarSeries, feeRates, type FundingSeries, runBacktest } from '../../src/engine/index.js'

/**
 * The engine benches' bars: 2.6 million BTCUSDT 1m bars built from one real recording, with funding
 * every 8 h. The backtest bench (built-in sma_cross) and the custom bench (the same strategy as a
 * user's module) run over exactly these, so their bars/s compare.
 */
export const BARS = 2_600_000
export const MINUTE = 60_000
export const SOURCE = 'BTCUSDT-1m-20250504-20250624.csv.gz'

export interface EngineBenchData {
  bars: BarSeries
  funding: FundingSeries
  /** Real bars in SOURCE, before tiling. */
  sourceBars: number
}

/**
 * The benches' backtest: sma_cross 10/30 long-only, BTCUSDT's filters and leverage tiers, 5 bps per
 * fill, 10,000 USDT at leverage 1, over every bar of `data`.
 */
export function smaCrossInput(data: Pick<EngineBenchData, 'bars' | 'funding'>): BacktestInput {
  const { bars, funding } = data
  return {
    templateId: 'sma_cross',
    params: { fast: 10, slow: 30, allow_short: false },
    bars: [bars],
    funding: [funding],
    rules: [{ stepSize: 0.001, minQty: 0.001, minNotional: 100, tickSize: 0.1, brackets: BINANCE_BTCUSDT_BRACKETS }],
    capital: 10_000,
    leverage: 1,
    fees: feeRates('fixed_bps', 5),
    start: bars.openTime[0]!,
    end: bars.openTime[bars.openTime.length - 1]!,
  }
}

/** SOURCE tiled to `count` bars (default BARS) and its funding events. */
export function engineBenchData(count = BARS): EngineBenchData {
  const source = loadKlines(findData(SOURCE))
  const bars = tile(source, count)
  const funding = fundingEvery8h(bars.openTime[0]!, bars.openTime[bars.openTime.length - 1]! + MINUTE)
  return { bars, funding, sourceBars: source.openTime.length }
}

/** A data file: the checkout's data/ subset when present, else the shared data set beside it. */
export function findData(name: string): string {
  const candidates = [path.resolve('data/binance-um-futures', name), path.resolve('../shared/data/binance-um-futures', name)]
  const found = candidates.find((file) => fs.existsSync(file))
  if (!found) throw new Error(`${name} not found in ${candidates.join(' or ')}`)
  return found
}

/** A BTCUSDT 1m kline CSV (open_time,open,high,low,close,volume) as a series. */
export function loadKlines(file: string): BarSeries {
  const rows = zlib.gunzipSync(fs.readFileSync(file)).toString('utf8').trim().split('\n').slice(1)
  const columns = [0, 1, 2, 3, 4, 5].map(() => new Float64Array(rows.length))
  rows.forEach((line, i) => line.split(',').forEach((cell, k) => (columns[k]![i] = Number(cell))))
  const [openTime, open, high, low, close, volume] = columns as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array]
  return { symbol: 'BTCUSDT', intervalMs: MINUTE, openTime, open, high, low, close, volume }
}

/**
 * `count` bars from a real series played forward, then backward (each bar's open and close swapped),
 * then forward again…: prices stay real tick values and continuous at every seam, open times run on
 * without gaps. Scaling copies instead would drift the price level tile after tile.
 */
export function tile(source: BarSeries, count: number): BarSeries {
  const n = source.openTime.length
  const out = {
    openTime: new Float64Array(count),
    open: new Float64Array(count),
    high: new Float64Array(count),
    low: new Float64Array(count),
    close: new Float64Array(count),
    volume: new Float64Array(count),
  }
  const t0 = source.openTime[0]!
  for (let i = 0; i < count; i++) {
    const lap = Math.floor(i / n)
    const forward = lap % 2 === 0
    const k = forward ? i % n : n - 1 - (i % n)
    out.openTime[i] = t0 + i * MINUTE
    out.open[i] = forward ? source.open[k]! : source.close[k]!
    out.close[i] = forward ? source.close[k]! : source.open[k]!
    out.high[i] = source.high[k]!
    out.low[i] = source.low[k]!
    out.volume[i] = source.volume[k]!
  }
  return { symbol: source.symbol, intervalMs: MINUTE, ...out }
}

/** Funding every 8 h (00:00, 08:00, 16:00 UTC) cycling through rates of typical size (±0.01 %). */
export function fundingEvery8h(from: number, to: number): FundingSeries {
  const rates = [0.0001, 0.00008, 0.00012, -0.00002, 0.0001, 0.00005]
  const times: number[] = []
  for (let t = Math.ceil(from / (8 * 3_600_000)) * 8 * 3_600_000; t < to; t += 8 * 3_600_000) times.push(t)
  return {
    time: Float64Array.from(times),
    rate: Float64Array.from(times, (_, k) => rates[k % rates.length]!),
    markPrice: new Float64Array(times.length).fill(Number.NaN),
  }
}

/** Bars of `intervalMs` made from finer bars on its grid: first open, highest high, lowest low, last close, summed volume. */
export function resample(fine: BarSeries, intervalMs: number): BarSeries {
  const n = fine.openTime.length
  const columns = [0, 1, 2, 3, 4, 5].map(() => new Float64Array(n))
  const [openTime, open, high, low, close, volume] = columns as [Float64Array, Float64Array, Float64Array, Float64Array, Float64Array, Float64Array]
  let k = -1
  for (let j = 0; j < n; j++) {
    const t = Math.floor(fine.openTime[j]! / intervalMs) * intervalMs
    if (k < 0 || openTime[k] !== t) {
      k++
      openTime[k] = t
      open[k] = fine.open[j]!
      high[k] = fine.high[j]!
      low[k] = fine.low[j]!
      volume[k] = 0
    }
    if (fine.high[j]! > high[k]!) high[k] = fine.high[j]!
    if (fine.low[j]! < low[k]!) low[k] = fine.low[j]!
    close[k] = fine.close[j]!
    volume[k]! += fine.volume[j]!
  }
  const used = (a: Float64Array) => a.slice(0, k + 1)
  return { symbol: fine.symbol, intervalMs, openTime: used(openTime), open: used(open), high: used(high), low: used(low), close: used(close), volume: used(volume) }
}

/** Warm-up runs, then timed runs: best and median wall clock, median CPU time (a shared host's other load excluded). */
export function measureBacktest(input: BacktestInput, warmups = 3, runs = 9) {
  let result: BacktestResult | undefined
  for (let k = 0; k < warmups; k++) result = runBacktest(input)
  const ms: number[] = []
  const cpuMs: number[] = []
  for (let k = 0; k < runs; k++) {
    const cpu = process.cpuUsage()
    const started = performance.now()
    result = runBacktest(input)
    ms.push(performance.now() - started)
    const used = process.cpuUsage(cpu)
    cpuMs.push((used.user + used.system) / 1000)
  }
  ms.sort((a, b) => a - b)
  cpuMs.sort((a, b) => a - b)
  const middle = Math.floor(runs / 2)
  return { result: result!, best: ms[0]!, median: ms[middle]!, medianCpu: cpuMs[middle]! }
}
