/**
 * Binance's leverage & margin tiers as GET /fapi/v1/leverageBracket answers them (`[{symbol, brackets:
 * [{bracket, initialLeverage, notionalCap, notionalFloor, maintMarginRatio, cum}]}]`), read into numbers.
 */

/** One tier: positions with notionalFloor < notional ≤ notionalCap need maintenance margin notional × maintMarginRatio − cum. */
export interface MaintenanceBracket {
  notionalFloor: number
  notionalCap: number
  maintMarginRatio: number
  /** Binance's "maintenance amount" (cum): keeps the maintenance margin continuous across tiers. */
  cum: number
  /** The highest leverage the tier allows (Perpetua's engine checks leverage 1..20 only). */
  initialLeverage?: number
}

/**
 * Binance's BTCUSDT leverage & margin tiers as GET /fapi/v1/leverageBracket returned them (tiers 1–10,
 * 0.4 % up to 50,000 USDT of notional … 50 % up to 500,000,000). A sample response recorded in
 * boolean404/heikin-ashi-trading-bot `json/fapiPrivate_get_leverage_bracket.py`; every cum checks out as
 * cum(n) = cum(n−1) + floor(n) × (rate(n) − rate(n−1)). Binance changes tiers from time to time and
 * per symbol: callers pass the symbol's own table when they have it; this one is the fallback.
 */
export const BINANCE_BTCUSDT_BRACKETS: readonly MaintenanceBracket[] = [
  { notionalFloor: 0, notionalCap: 50_000, maintMarginRatio: 0.004, cum: 0, initialLeverage: 125 },
  { notionalFloor: 50_000, notionalCap: 250_000, maintMarginRatio: 0.005, cum: 50, initialLeverage: 100 },
  { notionalFloor: 250_000, notionalCap: 3_000_000, maintMarginRatio: 0.01, cum: 1_300, initialLeverage: 50 },
  { notionalFloor: 3_000_000, notionalCap: 20_000_000, maintMarginRatio: 0.025, cum: 46_300, initialLeverage: 20 },
  { notionalFloor: 20_000_000, notionalCap: 40_000_000, maintMarginRatio: 0.05, cum: 546_300, initialLeverage: 10 },
  { notionalFloor: 40_000_000, notionalCap: 100_000_000, maintMarginRatio: 0.1, cum: 2_546_300, initialLeverage: 5 },
  { notionalFloor: 100_000_000, notionalCap: 120_000_000, maintMarginRatio: 0.125, cum: 5_046_300, initialLeverage: 4 },
  { notionalFloor: 120_000_000, notionalCap: 200_000_000, maintMarginRatio: 0.15, cum: 8_046_300, initialLeverage: 3 },
  { notionalFloor: 200_000_000, notionalCap: 300_000_000, maintMarginRatio: 0.25, cum: 28_046_300, initialLeverage: 2 },
  { notionalFloor: 300_000_000, notionalCap: 500_000_000, maintMarginRatio: 0.5, cum: 103_046_300, initialLeverage: 1 },
]

/** Tiers keep the maintenance margin continuous: cum(n) = cum(n−1) + floor(n) × (rate(n) − rate(n−1)); within a cent. */
export function cumProblem(symbol: string, brackets: readonly MaintenanceBracket[]): string | undefined {
  for (let i = 1; i < brackets.length; i++) {
    const [prev, cur] = [brackets[i - 1]!, brackets[i]!]
    const expected = prev.cum + cur.notionalFloor * (cur.maintMarginRatio - prev.maintMarginRatio)
    if (Math.abs(expected - cur.cum) > 0.01) return `${symbol} tier ${i + 1}: cum ${cur.cum}, expected ${expected}`
    if (cur.notionalFloor !== prev.notionalCap) return `${symbol} tier ${i + 1}: floor ${cur.notionalFloor} is not the previous cap ${prev.notionalCap}`
  }
  return undefined
}

/**
 * Binance's leverageBracket answer (a list, or one object for one symbol) as tiers per symbol, ascending
 * by floor. Throws naming the row on a malformed answer, or one whose cum does not check out.
 */
export function parseLeverageBrackets(raw: unknown, where: string): Map<string, MaintenanceBracket[]> {
  const rows = Array.isArray(raw) ? raw : [raw]
  const tables = new Map<string, MaintenanceBracket[]>()
  for (const row of rows as { symbol?: unknown; brackets?: unknown }[]) {
    if (typeof row?.symbol !== 'string' || !Array.isArray(row.brackets) || row.brackets.length === 0) throw new Error(`${where}: a row without symbol and brackets`)
    const brackets = (row.brackets as Record<string, unknown>[]).map((b) => {
      const tier: MaintenanceBracket = {
        notionalFloor: Number(b.notionalFloor),
        notionalCap: Number(b.notionalCap),
        maintMarginRatio: Number(b.maintMarginRatio),
        cum: Number(b.cum),
        initialLeverage: Number(b.initialLeverage),
      }
      if (!Object.values(tier).every((v) => Number.isFinite(v) && v >= 0)) throw new Error(`${where}: ${row.symbol} has a malformed tier`)
      return tier
    })
    brackets.sort((a, b) => a.notionalFloor - b.notionalFloor)
    const problem = cumProblem(row.symbol, brackets)
    if (problem) throw new Error(`${where}: ${problem}`)
    tables.set(row.symbol, brackets)
  }
  return tables
}
