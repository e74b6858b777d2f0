import fs from 'node:fs'
import zlib from 'node:zlib'
import type { BarSeries, SymbolRules } from '../../engine/types.js'
import { SANDBOX_LIMITS } from './limits.js'

/** Where the smoke run's bars start: 2021-01-01, a stretch with trends both ways. */
const FROM = Date.UTC(2021, 0, 1)
const FILES = { BTCUSDT: 'BTCUSDT-1h-20190908-20260517.csv.gz', ETHUSDT: 'ETHUSDT-1h-20191127-20260517.csv.gz' } as const
/** The filters the smoke run hands the module (BTCUSDT's and ETHUSDT's on Binance USD-M). */
const RULES: Record<keyof typeof FILES, SymbolRules> = {
  BTCUSDT: { tickSize: 0.1, stepSize: 0.001, minQty: 0.001, minNotional: 100, brackets: [{ notionalFloor: 0, notionalCap: 50_000, maintMarginRatio: 0.004, cum: 0 }] },
  ETHUSDT: { tickSize: 0.01, stepSize: 0.001, minQty: 0.001, minNotional: 20, brackets: [{ notionalFloor: 0, notionalCap: 50_000, maintMarginRatio: 0.005, cum: 0 }] },
}

export interface SmokeData {
  bars: BarSeries[]
  rules: SymbolRules[]
}

/**
 * Recorded BTCUSDT and ETHUSDT 1h bars from the project's data folder (the replay exchange's own
 * recordings), SANDBOX_LIMITS.smokeBars of each: what an upload is run over before it is stored.
 */
export function loadSmokeData(dataDir = new URL('../../../data/binance-um-futures/', import.meta.url)): SmokeData {
  const bars = (Object.keys(FILES) as (keyof typeof FILES)[]).map((symbol) => {
    const text = zlib.gunzipSync(fs.readFileSync(new URL(FILES[symbol], dataDir))).toString('utf8')
    const rows = text.split('\n').slice(1).map((line) => line.split(',').map(Number)).filter((row) => row[0]! >= FROM).slice(0, SANDBOX_LIMITS.smokeBars)
    const column = (c: number) => Float64Array.from(rows, (row) => row[c]!)
    return { symbol, intervalMs: 3_600_000, openTime: column(0), open: column(1), high: column(2), low: column(3), close: column(4), volume: column(5) }
  })
  return { bars, rules: Object.values(RULES) }
}
