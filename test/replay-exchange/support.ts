import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { PROJECT_ROOT } from '../cli/cli-process.js'
import { type ReplayExchange, type ReplayExchangeOptions, startReplayExchange } from '../../src/replay-exchange/index.js'
import { poll } from '../support/poll.js'

export { poll }

export const DATA_DIR = path.join(PROJECT_ROOT, 'data')
export const FUTURES_DIR = path.join(DATA_DIR, 'binance-um-futures')

/** 2025-06-17T08:38:08Z, the default replay start (the premiumIndex snapshot's time). */
export const SNAPSHOT_TIME = 1750149488000
export const MINUTE = 60_000
export const HOUR = 3_600_000
export const DAY = 86_400_000

/** A wall clock the test moves by hand. */
export class ManualClock {
  constructor(public value = Date.UTC(2030, 0, 1)) {}
  now = (): number => this.value
  advance(ms: number): void {
    this.value += ms
  }
}

export interface TestExchange {
  exchange: ReplayExchange
  clock: ManualClock
  /** GET and parse JSON; returns status, headers and body. */
  get<T = unknown>(pathAndQuery: string): Promise<{ status: number; headers: Headers; body: T }>
  close(): Promise<void>
}

export async function startTestExchange(options: ReplayExchangeOptions = {}): Promise<TestExchange> {
  const clock = new ManualClock()
  const exchange = await startReplayExchange({ now: clock.now, ...options })
  return {
    exchange,
    clock,
    async get<T>(pathAndQuery: string) {
      const response = await fetch(`${exchange.url}${pathAndQuery}`)
      const text = await response.text()
      return { status: response.status, headers: response.headers, body: JSON.parse(text) as T }
    },
    close: () => exchange.close(),
  }
}

/** Rows of a recorded CSV, read independently of the replay exchange's own loader. */
export function readCsv(file: string): Record<string, string>[] {
  const bytes = fs.readFileSync(path.join(FUTURES_DIR, file))
  const text = (file.endsWith('.gz') ? zlib.gunzipSync(bytes) : bytes).toString('utf8').trim()
  const [header, ...lines] = text.split('\n')
  const names = header!.split(',')
  return lines.map((line) => Object.fromEntries(line.split(',').map((cell, i) => [names[i]!, cell])))
}

export interface Bar {
  time: number
  open: number
  high: number
  low: number
  close: number
  volume: number
}

export function readBars(file: string): Bar[] {
  return readCsv(file).map((r) => ({
    time: Number(r.open_time),
    open: Number(r.open),
    high: Number(r.high),
    low: Number(r.low),
    close: Number(r.close),
    volume: Number(r.volume),
  }))
}

/** Open, high, low, close and volume of consecutive bars, as a kline aggregation must give them. */
export function aggregate(bars: Bar[]): Omit<Bar, 'time'> {
  return {
    open: bars[0]!.open,
    high: Math.max(...bars.map((b) => b.high)),
    low: Math.min(...bars.map((b) => b.low)),
    close: bars[bars.length - 1]!.close,
    volume: bars.reduce((sum, b) => sum + b.volume, 0),
  }
}

export type Kline = [number, string, string, string, string, string, number, string, number, string, string, string]

