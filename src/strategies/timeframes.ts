/**
 * The bar intervals of strategies and backtests. Kept free of imports so the dashboard (web/) bundles
 * this list instead of restating it.
 */
export const TIMEFRAMES = ['1m', '5m', '15m', '1h', '4h', '1d'] as const
export type Timeframe = (typeof TIMEFRAMES)[number]

/** Each timeframe's bar length in milliseconds. */
export const TIMEFRAME_MS: Record<(typeof TIMEFRAMES)[number], number> = {
  '1m': 60_000,
  '5m': 300_000,
  '15m': 900_000,
  '1h': 3_600_000,
  '4h': 14_400_000,
  '1d': 86_400_000,
}
