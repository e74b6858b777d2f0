/**
 * The columns of a kline CSV in Binance's public data archive (data.binance.vision, `…/klines/…zip`),
 * in order: the fields of a /fapi/v1/klines row, named as the archive's header row names them.
 */
export const KLINE_CSV_COLUMNS = [
  'open_time',
  'open',
  'high',
  'low',
  'close',
  'volume',
  'close_time',
  'quote_volume',
  'count',
  'taker_buy_volume',
  'taker_buy_quote_volume',
  'ignore',
] as const

export type KlineCsvColumn = (typeof KLINE_CSV_COLUMNS)[number]

/** The header row some archive files carry (newer ones); older files start with the first bar. */
export const KLINE_CSV_HEADER = KLINE_CSV_COLUMNS.join(',')
