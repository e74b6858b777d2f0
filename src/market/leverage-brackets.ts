import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import zlib from 'node:zlib'
import { BINANCE_BTCUSDT_BRACKETS, type MaintenanceBracket, parseLeverageBrackets } from '../binance-formats/leverage-brackets.js'

/**
 * Each symbol's leverage and maintenance-margin tiers, as Binance's signed GET /fapi/v1/leverageBracket
 * answers them (`[{symbol, brackets: [{bracket, initialLeverage, notionalCap, notionalFloor,
 * maintMarginRatio, cum}]}]`). Backtests and dry runs read the dated snapshot in data/ (provenance:
 * data/SOURCES.md); live runs read their account's own answer; a symbol neither lists falls back to
 * Binance's recorded BTCUSDT sample (binance-formats/). The engine stays pure: callers hand it the table.
 */

/** Where a table came from: the dated snapshot, the account's own answer, or the BTCUSDT sample as a fallback. */
export type MarginTableSource = 'snapshot' | 'account' | 'fallback'

export interface MarginTable {
  source: MarginTableSource
  /** The day the tiers were recorded (snapshot, fallback: YYYY-MM-DD) or read (account: an ISO time). */
  asOf: string
  brackets: readonly MaintenanceBracket[]
}

/** The snapshot shipped in data/: every USDⓈ-M symbol's tiers as of 2024-10-24 (345 symbols). */
export const SNAPSHOT_FILE = 'binance-um-futures/snapshots/leverageBracket-20241024.json.gz'
export const SNAPSHOT_AS_OF = '2024-10-24'
/** The BTCUSDT sample table's recording (boolean404/heikin-ashi-trading-bot, src/binance-formats/leverage-brackets.ts); older than the snapshot. */
export const FALLBACK_AS_OF = 'BTCUSDT sample'

/** One recorded set of tables with its date; symbols it lacks get the BTCUSDT sample, said so in `source`. */
export class BracketBook {
  constructor(
    readonly tables: ReadonlyMap<string, readonly MaintenanceBracket[]>,
    readonly asOf: string,
    readonly source: MarginTableSource = 'snapshot',
  ) {}

  /** A recorded leverageBracket file (plain or gzipped JSON). */
  static load(file: string, asOf: string): BracketBook {
    const bytes = fs.readFileSync(file)
    const text = (file.endsWith('.gz') ? zlib.gunzipSync(bytes) : bytes).toString('utf8')
    return new BracketBook(parseLeverageBrackets(JSON.parse(text), path.basename(file)), asOf)
  }

  bracketsFor(symbol: string): MarginTable {
    const brackets = this.tables.get(symbol)
    return brackets ? { source: this.source, asOf: this.asOf, brackets } : { source: 'fallback', asOf: FALLBACK_AS_OF, brackets: BINANCE_BTCUSDT_BRACKETS }
  }
}

/** The project's data/ folder: two levels up from src/market/ and dist/market/ alike. */
function projectDataDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../data')
}

let snapshotBook: BracketBook | undefined

/** The shipped snapshot, read once on first use (14 KB gzipped, ~5 ms); constant data, like a table in code. */
export function snapshotBrackets(): BracketBook {
  snapshotBook ??= BracketBook.load(path.join(projectDataDir(), SNAPSHOT_FILE), SNAPSHOT_AS_OF)
  return snapshotBook
}

/**
 * A symbol's margin tiers for backtests, dry runs and checks made without an account (leverage at
 * deploy): the dated snapshot's, else the BTCUSDT sample (source 'fallback').
 */
export function bracketsFor(symbol: string): MarginTable {
  return snapshotBrackets().bracketsFor(symbol)
}

/** The highest leverage a table allows at a notional: the initial leverage of the tier the notional falls in. */
export function maxLeverageAt(brackets: readonly MaintenanceBracket[], notional: number): number {
  for (const bracket of brackets) if (notional <= bracket.notionalCap) return bracket.initialLeverage ?? 1
  return brackets[brackets.length - 1]?.initialLeverage ?? 1
}

/** What a backtest result says about its tables (result.margin_table): the snapshot's date, and the symbols it lacked. */
export function marginTableOf(symbols: readonly string[]): { source: 'snapshot' | 'fallback'; as_of: string; fallback_symbols: string[] } {
  const fallback = symbols.filter((symbol) => bracketsFor(symbol).source === 'fallback')
  return fallback.length === symbols.length && symbols.length > 0
    ? { source: 'fallback', as_of: FALLBACK_AS_OF, fallback_symbols: fallback }
    : { source: 'snapshot', as_of: SNAPSHOT_AS_OF, fallback_symbols: fallback }
}
