/**
 * Binance's public data archive (data.binance.vision) for USD-M klines and mark-price klines: a zip per
 * kind, symbol, interval and month, and per day, each with a `.CHECKSUM` companion (research: the
 * archive's layout). Months become
 * files some days after they end and days the day after; the lags below only choose which file is
 * asked for first: a file the archive lacks yet answers 404 and its span comes over REST.
 */

const DAY_MS = 86_400_000
/** A month's file is asked for from a week after the month ends (Binance publishes them in its first days). */
const MONTHLY_LAG_MS = 7 * DAY_MS
/** A day's file from a day after it ends. */
const DAILY_LAG_MS = DAY_MS

/**
 * The archive's kline kinds, named as its folders and as their REST paths (/fapi/v1/klines,
 * /fapi/v1/markPriceKlines): both files have the same twelve columns (mark-price rows carry volume 0).
 */
export type KlineKind = 'klines' | 'markPriceKlines'

/** One archive file and the open times its bars have: [from, to). */
export interface ArchiveFile {
  /** Relative to the archive's base URL, e.g. data/futures/um/monthly/klines/BTCUSDT/5m/BTCUSDT-5m-2023-01.zip */
  path: string
  from: number
  to: number
}

/** Archive files hold whole UTC days, so only intervals that divide a day can be split across them. */
export function archivable(intervalMs: number): boolean {
  return intervalMs <= DAY_MS && DAY_MS % intervalMs === 0
}

const two = (n: number) => String(n).padStart(2, '0')

export function monthlyKlinesFile(symbol: string, interval: string, monthStart: number, kind: KlineKind = 'klines'): ArchiveFile {
  const d = new Date(monthStart)
  const name = `${symbol}-${interval}-${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}`
  return { path: `data/futures/um/monthly/${kind}/${symbol}/${interval}/${name}.zip`, from: monthStart, to: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) }
}

export function dailyKlinesFile(symbol: string, interval: string, dayStart: number, kind: KlineKind = 'klines'): ArchiveFile {
  const d = new Date(dayStart)
  const name = `${symbol}-${interval}-${d.getUTCFullYear()}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}`
  return { path: `data/futures/um/daily/${kind}/${symbol}/${interval}/${name}.zip`, from: dayStart, to: dayStart + DAY_MS }
}

/**
 * The files of `kind` that cover parts of [from, to) exactly: whole months a week past, then whole days
 * a day past, in time order. What they leave (a partial day at either end, the last day or two) is REST's.
 */
export function planKlineFiles(symbol: string, interval: string, from: number, to: number, now: number, kind: KlineKind = 'klines'): ArchiveFile[] {
  const files: ArchiveFile[] = []
  let cursor = Math.ceil(from / DAY_MS) * DAY_MS
  while (cursor < to) {
    const d = new Date(cursor)
    if (d.getUTCDate() === 1) {
      const month = monthlyKlinesFile(symbol, interval, cursor, kind)
      if (month.to <= to && month.to + MONTHLY_LAG_MS <= now) {
        files.push(month)
        cursor = month.to
        continue
      }
    }
    const day = dailyKlinesFile(symbol, interval, cursor, kind)
    if (day.to > to || day.to + DAILY_LAG_MS > now) break
    files.push(day)
    cursor = day.to
  }
  return files
}

/** The path of a file's checksum: `<file>.CHECKSUM`, holding `<sha256 hex>  <file name>`. */
export function checksumPath(file: ArchiveFile): string {
  return `${file.path}.CHECKSUM`
}
