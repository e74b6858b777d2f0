/** A USD-M symbol as Perpetua's jobs, strategies and history commands take it: 2–30 uppercase letters and digits (BTCUSDT). */
export const SYMBOL_PATTERN = '^[A-Z0-9]{2,30}$'
export const SYMBOL = new RegExp(SYMBOL_PATTERN)
