import { Type } from 'typebox'

/** Schema builders for template params: every field carries its bounds, default and meaning. */
export const integer = (minimum: number, maximum: number, fallback: number, description: string) =>
  Type.Integer({ minimum, maximum, default: fallback, description })

export const decimal = (minimum: number, maximum: number, fallback: number, description: string) =>
  Type.Number({ minimum, maximum, default: fallback, description })

export const flag = (fallback: boolean, description: string) => Type.Boolean({ default: fallback, description })

export const ALLOW_SHORT_DESCRIPTION = 'Reverse into a short on the opposite signal instead of only closing the long'

/**
 * Smallest capital for one-symbol templates: an all-in position must clear Binance's largest common
 * MIN_NOTIONAL (100 USDT on BTCUSDT) at leverage 1 after the taker fee is set aside.
 */
export const SINGLE_SYMBOL_MIN_CAPITAL = 200

/**
 * Smallest capital for multi-symbol templates (cross_sectional_momentum, and users' multi-symbol
 * modules): several positions at once, each of which must clear its symbol's MIN_NOTIONAL.
 */
export const MULTI_SYMBOL_MIN_CAPITAL = 1000
