import { type Static, Type } from 'typebox'
import { SymbolSchema } from './schemas.js'

/**
 * "Whales" and "smart money" are Binance's top traders: the 20% of accounts with the largest margin
 * balance. Binance publishes their long/short shares by account (head-count) and by position size,
 * not absolute counts; the fields below are built from those shares, open interest, taker volume and
 * recent trades. Formulas are in each description and in docs/decisions/market-data.md ("Market data").
 */

const Decimal = (description: string) => Type.String({ description })
const NullableDecimal = (description: string) => Type.Union([Type.String(), Type.Null()], { description })

export const WHALE_TRADE_THRESHOLD = 100_000

export const SmartMoneyOverviewQuerySchema = Type.Object({ symbol: SymbolSchema }, { additionalProperties: false })
export type SmartMoneyOverviewQuery = Static<typeof SmartMoneyOverviewQuerySchema>

export const SIGNALS = ['bullish', 'bearish', 'neutral'] as const

export const SmartMoneyOverviewSchema = Type.Object({
  symbol: Type.String(),
  period: Type.Literal('5m', { description: 'Interval of the series used' }),
  timestamp: Type.Integer({ description: 'Unix ms of the latest top-trader point' }),
  markPrice: NullableDecimal('Current mark price'),
  averagePrice: NullableDecimal('24 h volume-weighted average price (ticker weightedAvgPrice)'),
  longAccountShare: Decimal('Head-count: share of top-trader accounts that are net long (topLongShortAccountRatio)'),
  shortAccountShare: Decimal('Head-count: share of top-trader accounts that are net short'),
  longShortAccountRatio: Decimal('longAccountShare / shortAccountShare'),
  longPositionShare: Decimal('Share of top traders’ open position size that is long (topLongShortPositionRatio)'),
  shortPositionShare: Decimal('Share of top traders’ open position size that is short'),
  longShortPositionRatio: Decimal('longPositionShare / shortPositionShare'),
  globalLongAccountShare: NullableDecimal('Share of all accounts that are net long (globalLongShortAccountRatio), for contrast'),
  globalShortAccountShare: NullableDecimal('Share of all accounts that are net short'),
  openInterest: NullableDecimal('Open interest in the base asset (openInterestHist)'),
  openInterestValue: NullableDecimal('Open interest in the quote asset'),
  netPositionShare: Decimal('Net position: longPositionShare − shortPositionShare, in [−1, 1]; positive = top traders net long'),
  netPositionShareChange1h: NullableDecimal('netPositionShare now minus one hour (12 points) earlier'),
  netPositionValue: NullableDecimal(
    'netPositionShare × openInterestValue: the net long (positive) or short (negative) the top traders’ skew amounts to across the open interest, in the quote asset',
  ),
  takerBuyVolume1h: NullableDecimal('Taker buy volume over the last hour (takerlongshortRatio buyVol, summed)'),
  takerSellVolume1h: NullableDecimal('Taker sell volume over the last hour'),
  takerBuySellRatio1h: NullableDecimal('takerBuyVolume1h / takerSellVolume1h'),
  whaleTradeThreshold: Decimal(`A whale trade is one of at least this quote value (${WHALE_TRADE_THRESHOLD})`),
  whaleCount: Type.Integer({ description: 'Whale trades among the 1000 most recent trades' }),
  whaleBuyCount: Type.Integer({ description: 'Whale trades where the taker bought (isBuyerMaker false)' }),
  whaleSellCount: Type.Integer({ description: 'Whale trades where the taker sold' }),
  whaleAveragePrice: NullableDecimal('Volume-weighted average price of those whale trades; null when there were none'),
  signal: Type.Enum(SIGNALS, {
    description:
      'bullish when netPositionShare >= 0.1, its 1 h change >= 0 and takerBuySellRatio1h >= 1; bearish when <= −0.1, change <= 0 and ratio <= 1; else neutral',
  }),
})
export type SmartMoneyOverview = Static<typeof SmartMoneyOverviewSchema>

export const TIME_RANGES = ['30m', '1h', '24h', '7d'] as const
export type TimeRange = (typeof TIME_RANGES)[number]

export const SmartMoneyListQuerySchema = Type.Object(
  {
    // A string here, checked by the handler: the spec answers 400 (not 422) for a value outside the set.
    timeRange: Type.Optional(Type.String({ maxLength: 16, pattern: '^[^\\x00-\\x1f\\x7f]*$', default: '24h', description: 'One of 30m, 1h, 24h, 7d; default 24h' })),
  },
  { additionalProperties: false },
)
export type SmartMoneyListQuery = Static<typeof SmartMoneyListQuerySchema>

export const SmartMoneyRowSchema = Type.Object({
  rank: Type.Integer({ description: '1 = largest |netPositionValue|' }),
  symbol: Type.String(),
  quoteVolume: Decimal('24 h quote volume'),
  longShortRatio: Decimal('Latest top-trader long/short position ratio'),
  netPositionShare: Decimal('Latest longPosition − shortPosition of top traders, in [−1, 1]'),
  netPositionShareChange: Decimal('netPositionShare now minus at the start of the range'),
  netPositionValue: NullableDecimal('netPositionShare × open interest value (quote asset), now'),
  netPositionValueChange: NullableDecimal('netPositionValue now minus at the start of the range: the large holders’ net flow'),
  takerBuyVolume: NullableDecimal('Taker buy volume over the range (base asset)'),
  takerSellVolume: NullableDecimal('Taker sell volume over the range (base asset)'),
  takerNetVolume: NullableDecimal('takerBuyVolume − takerSellVolume: the long/short flow of aggressive orders'),
  takerBuySellRatio: NullableDecimal('takerBuyVolume / takerSellVolume'),
})
export type SmartMoneyRow = Static<typeof SmartMoneyRowSchema>

export const SmartMoneyListSchema = Type.Object({
  timeRange: Type.Enum(TIME_RANGES),
  period: Type.String({ description: 'Interval of the series the range is read from: 5m for 30m and 1h, 1h for 24h, 4h for 7d' }),
  generatedAt: Type.Integer({ description: 'Unix ms' }),
  rows: Type.Array(SmartMoneyRowSchema, { description: 'The 10 USDT-quoted symbols of largest 24 h quote volume, by |netPositionValue| descending' }),
})
export type SmartMoneyList = Static<typeof SmartMoneyListSchema>

export const WhaleBoardQuerySchema = Type.Object(
  {
    min_quote_volume: Type.Optional(
      Type.Number({ minimum: 0, maximum: 1e15, default: 50_000_000, description: 'Minimum 24 h quote volume in USDT; default 50000000' }),
    ),
  },
  { additionalProperties: false },
)
export type WhaleBoardQuery = Static<typeof WhaleBoardQuerySchema>

export const WhaleBoardSchema = Type.Object({
  generatedAt: Type.Integer({ description: 'Unix ms' }),
  rows: Type.Array(
    Type.Object({
      symbol: Type.String(),
      quoteVolume: Decimal('24 h quote volume (USDT)'),
      whaleLongShort: Decimal('Latest top-trader long/short position ratio (5m); above 1 the whales lean long'),
      score: Type.Number({ description: 'Conviction in a liquid market: |ln(whaleLongShort)| × log10(quoteVolume), 4 decimals' }),
    }),
    { description: 'USDT-quoted symbols at or above min_quote_volume (the 50 largest), by score descending' },
  ),
})
export type WhaleBoard = Static<typeof WhaleBoardSchema>
