import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Interval, isInterval, nominalMs } from '../../common/intervals.js'

/**
 * The recorded data folder, in the layout of ../shared/data (see its SOURCES.md): series are found
 * by file name, so the project's compact data/ and the full shared folder load the same way, and a
 * file may be plain or gzipped (`.csv` / `.csv.gz`, `.json` / `.json.gz`).
 */

/** The project's data/ folder: two levels up from this module in src/replay-exchange/ and dist/replay-exchange/ alike. */
export function defaultDataDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../data')
}

export interface KlineFile {
  symbol: string
  interval: Interval
  /** Span from the file name (first day 00:00 to the day after the last day), exact only after loading. */
  from: number
  to: number
  file: string
}

export type SampleKind = 'globalLongShortAccountRatio' | 'topLongShortAccountRatio' | 'topLongShortPositionRatio' | 'openInterestHist'
const SAMPLE_KINDS: readonly SampleKind[] = ['globalLongShortAccountRatio', 'topLongShortAccountRatio', 'topLongShortPositionRatio', 'openInterestHist']

export interface SampleFile {
  symbol: string
  kind: SampleKind
  period: string
  file: string
}

export interface DataFiles {
  dir: string
  klines: KlineFile[]
  /** Recorded mark-price klines (`SYMBOL-markPrice-INTERVAL-….csv[.gz]`: open_time, open, high, low, close). */
  markKlines: KlineFile[]
  /** Files with a symbol column (`multi-symbol-1d.csv.gz`). */
  multiDaily: string[]
  funding: Map<string, string>
  samples: SampleFile[]
  exchangeInfo: string
  premiumIndex: string | undefined
  /** snapshots/leverageBracket-YYYYMMDD.json: every symbol's margin tiers (absent: the BTCUSDT sample for all). */
  leverageBracket: string | undefined
}

const KLINE = /^([A-Z0-9]+)-(\w+)-(\d{8})-(\d{8})\.csv(\.gz)?$/
const MARK_KLINE = /^([A-Z0-9]+)-markPrice-(\w+)-(\d{8})-(\d{8})\.csv(\.gz)?$/
const FUNDING = /^([A-Z0-9]+)-fundingRate-\d{8}-\d{8}\.csv(\.gz)?$/
const SAMPLE = /^([A-Z0-9]+)-(\w+)-(\w+)-\d{8}-\d{8}\.csv(\.gz)?$/
const MULTI_DAILY = /^multi-symbol-1d\.csv(\.gz)?$/

function dayStart(yyyymmdd: string): number {
  return Date.UTC(Number(yyyymmdd.slice(0, 4)), Number(yyyymmdd.slice(4, 6)) - 1, Number(yyyymmdd.slice(6, 8)))
}

/** A kline file from its name's match: symbol, interval, first day, last day. */
function klineFile(match: RegExpExecArray, file: string): KlineFile {
  const interval = match[2] as Interval
  return { symbol: match[1]!, interval, from: dayStart(match[3]!), to: dayStart(match[4]!) + 86_400_000 + nominalMs(interval), file }
}

/** Lists the recorded files of a data folder; throws when the folder or its exchangeInfo snapshot is missing. */
export function scanDataDir(dir: string): DataFiles {
  const futures = path.join(dir, 'binance-um-futures')
  if (!fs.existsSync(futures)) throw new Error(`replay exchange: no binance-um-futures/ folder in ${dir}`)
  const files: DataFiles = { dir, klines: [], markKlines: [], multiDaily: [], funding: new Map(), samples: [], exchangeInfo: '', premiumIndex: undefined, leverageBracket: undefined }
  for (const name of fs.readdirSync(futures).sort()) {
    const file = path.join(futures, name)
    let match: RegExpExecArray | null
    if (MULTI_DAILY.test(name)) files.multiDaily.push(file)
    else if ((match = FUNDING.exec(name))) files.funding.set(match[1]!, file)
    else if ((match = MARK_KLINE.exec(name)) && isInterval(match[2]!)) files.markKlines.push(klineFile(match, file))
    else if ((match = KLINE.exec(name)) && isInterval(match[2]!)) files.klines.push(klineFile(match, file))
    else if ((match = SAMPLE.exec(name)) && (SAMPLE_KINDS as readonly string[]).includes(match[2]!)) {
      files.samples.push({ symbol: match[1]!, kind: match[2] as SampleKind, period: match[3]!, file })
    }
  }
  const snapshots = path.join(futures, 'snapshots')
  const snapshot = (prefix: string) =>
    fs.existsSync(snapshots)
      ? fs
          .readdirSync(snapshots)
          .filter((name) => name.startsWith(`${prefix}-`) && /\.json(\.gz)?$/.test(name))
          .sort()
          .map((name) => path.join(snapshots, name))
          .pop()
      : undefined
  const exchangeInfo = snapshot('exchangeInfo')
  if (!exchangeInfo) throw new Error(`replay exchange: no snapshots/exchangeInfo-*.json in ${futures}`)
  files.exchangeInfo = exchangeInfo
  files.premiumIndex = snapshot('premiumIndex')
  files.leverageBracket = snapshot('leverageBracket')
  return files
}
