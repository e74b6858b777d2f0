import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import assert from 'node:assert/strict'
import { BINANCE_BTCUSDT_BRACKETS } from '../../src/binance-formats/leverage-brackets.js'
import type { BacktestResult, BarSeries, FundingSeries, SymbolRules } from '../../src/engine/types.js'
import type { ClosedBar } from '../../src/live/brokers/broker.js'
import { findTemplate } from '../../src/templates/registry.js'
import { resolveParams } from '../../src/templates/validate.js'

export const HOUR = 3_600_000
export const DAY = 86_400_000

/** BTCUSDT's filters in the 2025-12-24 exchangeInfo snapshot (MARKET_LOT_SIZE, MIN_NOTIONAL, PRICE_FILTER). */
export const BTCUSDT_RULES: SymbolRules = { stepSize: 0.001, minQty: 0.001, minNotional: 100, tickSize: 0.1, brackets: BINANCE_BTCUSDT_BRACKETS }

/** Rules that never skip an order, for hand-computed cases. */
export const LOOSE_RULES: SymbolRules = { stepSize: 0.001, minQty: 0.001, minNotional: 0, tickSize: 0.1, brackets: BINANCE_BTCUSDT_BRACKETS }

export const NO_FUNDING: FundingSeries = { time: new Float64Array(0), rate: new Float64Array(0), markPrice: new Float64Array(0) }

/** A series from rows of [open, high, low, close], one bar per interval from `start`. */
export function barsFromRows(symbol: string, start: number, interval: number, rows: readonly (readonly number[])[]): BarSeries {
  const column = (k: number) => Float64Array.from(rows, (row) => row[k]!)
  return {
    symbol,
    intervalMs: interval,
    openTime: Float64Array.from(rows, (_, i) => start + i * interval),
    open: column(0),
    high: column(1),
    low: column(2),
    close: column(3),
    volume: Float64Array.from(rows, () => 1),
  }
}

/** A series whose bars open and close at the given closes (open = previous close), high/low around them. */
export function barsFromCloses(symbol: string, start: number, interval: number, closes: readonly number[]): BarSeries {
  return barsFromRows(
    symbol,
    start,
    interval,
    closes.map((c, i) => {
      const o = i === 0 ? c : closes[i - 1]!
      return [o, Math.max(o, c), Math.min(o, c), c]
    }),
  )
}

export function funding(events: readonly { time: number; rate: number; mark?: number }[]): FundingSeries {
  return {
    time: Float64Array.from(events, (e) => e.time),
    rate: Float64Array.from(events, (e) => e.rate),
    markPrice: Float64Array.from(events, (e) => e.mark ?? Number.NaN),
  }
}

/** Deterministic PRNG (mulberry32) for property tests. */
export function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** A random walk of n bars with prices on a 0.1 tick, starting at `price`. */
export function randomBars(symbol: string, seed: number, n: number, start = Date.UTC(2024, 0, 1), interval = HOUR, price = 30_000): BarSeries {
  const next = random(seed)
  const tick = (x: number) => Math.max(0.1, Math.round(x * 10) / 10)
  const rows: number[][] = []
  let close = price
  for (let i = 0; i < n; i++) {
    const open = close
    close = tick(open * (1 + (next() - 0.5) * 0.02))
    const high = tick(Math.max(open, close) * (1 + next() * 0.01))
    const low = tick(Math.min(open, close) * (1 - next() * 0.01))
    rows.push([open, high, low, close])
  }
  return barsFromRows(symbol, start, interval, rows)
}

/**
 * A data file by name: the project's data/ subset when present, else the shared data set
 * (../shared/data, described in its SOURCES.md). Only tests read files; the engine never does.
 */
export function dataFile(name: string): string {
  const candidates = [path.resolve('data/binance-um-futures', name), path.resolve('../shared/data/binance-um-futures', name)]
  const found = candidates.find((file) => fs.existsSync(file))
  if (!found) throw new Error(`data file ${name} not found in ${candidates.join(' or ')}`)
  return found
}

function readCsv(file: string): string[][] {
  const raw = fs.readFileSync(file)
  const text = file.endsWith('.gz') ? zlib.gunzipSync(raw).toString('utf8') : raw.toString('utf8')
  return text
    .trim()
    .split('\n')
    .slice(1)
    .map((line) => line.split(','))
}

/** A kline CSV (open_time,open,high,low,close,volume) as a series. */
export function loadKlines(symbol: string, name: string, interval: number): BarSeries {
  const rows = readCsv(dataFile(name))
  const column = (k: number) => Float64Array.from(rows, (row) => Number(row[k]))
  return { symbol, intervalMs: interval, openTime: column(0), open: column(1), high: column(2), low: column(3), close: column(4), volume: column(5) }
}

/** A funding CSV (symbol,fundingTime,fundingRate,markPrice; markPrice may be empty). */
export function loadFunding(name: string): FundingSeries {
  const rows = readCsv(dataFile(name))
  return {
    time: Float64Array.from(rows, (row) => Number(row[1])),
    rate: Float64Array.from(rows, (row) => Number(row[2])),
    markPrice: Float64Array.from(rows, (row) => (row[3] === undefined || row[3].trim() === '' ? Number.NaN : Number(row[3]))),
  }
}

/** A test strategy that states given targets at given bar indices (NaN elsewhere), and records what it was asked. */
export class ScheduleSignal {
  readonly calls: number[] = []
  constructor(private readonly schedule: ReadonlyMap<number, number>) {}
  onBar(i: number): number {
    this.calls.push(i)
    return this.schedule.get(i) ?? Number.NaN
  }
}

/** Daily klines of several symbols from multi-symbol-1d.csv.gz (symbol,open_time,open,high,low,close,volume). */
export function loadMultiDaily(symbols: readonly string[]): BarSeries[] {
  const rows = readCsv(dataFile('multi-symbol-1d.csv.gz'))
  return symbols.map((symbol) => {
    const mine = rows.filter((row) => row[0] === symbol)
    const column = (k: number) => Float64Array.from(mine, (row) => Number(row[k]))
    return { symbol, intervalMs: DAY, openTime: column(1), open: column(2), high: column(3), low: column(4), close: column(5), volume: column(6) }
  })
}

export const MINUTE = 60_000

/** Bars of `interval` built from finer bars (first open, highest high, lowest low, last close), one per grid slot they fill. */
export function aggregate(fine: BarSeries, interval: number): BarSeries {
  const rows = new Map<number, number[]>()
  for (let j = 0; j < fine.openTime.length; j++) {
    const t = Math.floor(fine.openTime[j]! / interval) * interval
    const row = rows.get(t)
    if (row === undefined) rows.set(t, [fine.open[j]!, fine.high[j]!, fine.low[j]!, fine.close[j]!])
    else rows.set(t, [row[0]!, Math.max(row[1]!, fine.high[j]!), Math.min(row[2]!, fine.low[j]!), fine.close[j]!])
  }
  const times = [...rows.keys()].sort((a, b) => a - b)
  const column = (k: number) => Float64Array.from(times, (t) => rows.get(t)![k]!)
  return { symbol: fine.symbol, intervalMs: interval, openTime: Float64Array.from(times), open: column(0), high: column(1), low: column(2), close: column(3), volume: Float64Array.from(times, () => 1) }
}

/** The series without the bars at the given open times. */
export function withoutBars(series: BarSeries, missing: readonly number[]): BarSeries {
  const keep = Array.from(series.openTime, (t, j) => (missing.includes(t) ? -1 : j)).filter((j) => j >= 0)
  const pick = (a: Float64Array) => Float64Array.from(keep, (j) => a[j]!)
  return { ...series, openTime: pick(series.openTime), open: pick(series.open), high: pick(series.high), low: pick(series.low), close: pick(series.close), volume: pick(series.volume) }
}

/**
 * A calmer random walk than randomBars, for exits inside bars: each bar moves up to ±step/2, its wicks up to
 * step/4 beyond; about one bar in `gapEvery` opens up to ±2·step away from the previous close (a gap).
 */
export function randomWalk(symbol: string, seed: number, n: number, start: number, interval: number, price: number, step: number, gapEvery = 500): BarSeries {
  const next = random(seed)
  const tick = (x: number) => Math.max(0.1, Math.round(x * 10) / 10)
  const rows: number[][] = []
  let close = price
  for (let i = 0; i < n; i++) {
    const open = next() < 1 / gapEvery ? tick(close * (1 + (next() - 0.5) * 4 * step)) : close
    close = tick(open * (1 + (next() - 0.5) * step))
    rows.push([open, tick(Math.max(open, close) * (1 + (next() * step) / 4)), tick(Math.min(open, close) * (1 - (next() * step) / 4)), close])
  }
  return barsFromRows(symbol, start, interval, rows)
}

export function near(actual: number, expected: number, what: string, scale = 1) {
  assert.ok(Math.abs(actual - expected) <= 1e-9 * Math.max(1, Math.abs(expected), scale), `${what}: ${actual} ≠ ${expected}`)
}

export function isStepMultiple(qty: number, step: number): boolean {
  const k = qty / step
  return Math.abs(k - Math.round(k)) < 1e-6
}

/** Cash conservation read off a result: every unit of equity is capital, a trade's pnl, or an open position's. */
export function assertConserved(result: BacktestResult, capital: number, what: string) {
  let expected = capital
  let fees = 0
  let funding = 0
  for (const trade of result.trades) {
    expected += trade.pnl
    fees += trade.fee
    funding += trade.funding
  }
  for (const position of result.openPositions) {
    expected += position.realizedPnl + position.unrealizedPnl - position.fee - position.funding
    fees += position.fee
    funding += position.funding
  }
  near(result.finalEquity, expected, `${what}: final equity against capital + pnl`, capital)
  near(result.feesPaid, fees, `${what}: fees`, capital)
  near(result.fundingPaid, funding, `${what}: funding`, capital)
  near(result.equityCurve[result.equityCurve.length - 1]![1], result.finalEquity, `${what}: last curve point`, capital)
}

export function assertCurveShape(result: BacktestResult, start: number, capital: number, what: string) {
  assert.deepEqual(result.equityCurve[0], [start, capital], `${what}: first point`)
  for (let k = 1; k < result.equityCurve.length; k++) {
    const gap = result.equityCurve[k]![0] - result.equityCurve[k - 1]![0]
    assert.ok(gap > 0 && gap <= DAY, `${what}: curve points ${k - 1}→${k} are ${gap} ms apart`)
    if (k < result.equityCurve.length - 1) assert.equal(result.equityCurve[k]![0] % DAY, 0, `${what}: point ${k} at a UTC midnight`)
  }
}

/** A built-in template's params with defaults applied; throws on params the test should not have given. */
export function validParams(templateId: string, params: unknown): Record<string, unknown> {
  const template = findTemplate(templateId)
  if (!template) throw new Error(`no template ${templateId}`)
  const resolved = resolveParams(template, params)
  if (!resolved.ok) throw new Error(`${resolved.problem.field}: ${resolved.problem.message}`)
  return resolved.value
}

/** Bar `i` of a series as a live runner hears a closed bar. */
export const barAt = (series: BarSeries, i: number): ClosedBar => ({
  openTime: series.openTime[i]!,
  open: series.open[i]!,
  high: series.high[i]!,
  low: series.low[i]!,
  close: series.close[i]!,
  volume: series.volume[i]!,
})
