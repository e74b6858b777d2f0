import type { FeeRates } from './types.js'

export const FEE_MODELS = ['none', 'fixed_bps', 'tiered_maker_taker', 'match_exchange'] as const
export type FeeModel = (typeof FEE_MODELS)[number]

/** The spec's default for fee_bps when fee_model is fixed_bps. */
export const DEFAULT_FEE_BPS = 5

/**
 * Binance USDⓈ-M futures fee tiers (USDT-margined, paid in USDT, no BNB discount), rates per fill.
 * Backtests use VIP 0, the tier of every account without 30-day volume; the rest are documentation
 * for traders comparing tiers. Source: Binance "Fee Schedule of Binance Futures" (regular 0.0200 % /
 * 0.0500 %, VIP 1 0.0160 % / 0.0400 % … VIP 9 0.0000 % / 0.0170 %).
 */
export const BINANCE_USDM_FEE_TIERS: readonly { tier: string; makerRate: number; takerRate: number }[] = [
  { tier: 'VIP 0', makerRate: 0.0002, takerRate: 0.0005 },
  { tier: 'VIP 1', makerRate: 0.00016, takerRate: 0.0004 },
  { tier: 'VIP 2', makerRate: 0.00014, takerRate: 0.00035 },
  { tier: 'VIP 3', makerRate: 0.00012, takerRate: 0.00032 },
  { tier: 'VIP 4', makerRate: 0.0001, takerRate: 0.0003 },
  { tier: 'VIP 5', makerRate: 0.00008, takerRate: 0.00027 },
  { tier: 'VIP 6', makerRate: 0.00006, takerRate: 0.00025 },
  { tier: 'VIP 7', makerRate: 0.00004, takerRate: 0.00022 },
  { tier: 'VIP 8', makerRate: 0.00002, takerRate: 0.0002 },
  { tier: 'VIP 9', makerRate: 0, takerRate: 0.00017 },
]

const VIP0 = BINANCE_USDM_FEE_TIERS[0]!

/**
 * Maps a fee_model (and fee_bps, honoured only for fixed_bps) to the rates charged per fill:
 * none → 0; fixed_bps → fee_bps / 10 000 for maker and taker; tiered_maker_taker and match_exchange →
 * Binance USDⓈ-M VIP 0 (maker 2 bps, taker 5 bps). Fills are market orders, so the taker rate applies.
 */
export function feeRates(model: FeeModel, feeBps: number = DEFAULT_FEE_BPS): FeeRates {
  switch (model) {
    case 'none':
      return { makerRate: 0, takerRate: 0 }
    case 'fixed_bps': {
      if (!Number.isFinite(feeBps) || feeBps < 0) throw new RangeError(`fee_bps must be a finite number ≥ 0 (got ${feeBps})`)
      const rate = feeBps / 10_000
      return { makerRate: rate, takerRate: rate }
    }
    case 'tiered_maker_taker':
    case 'match_exchange':
      return { makerRate: VIP0.makerRate, takerRate: VIP0.takerRate }
  }
}

/** Markdown table of the tiers, for API descriptions. */
export function feeTiersMarkdown(): string {
  const pct = (rate: number) => `${(rate * 100).toFixed(4)} %`
  const rows = BINANCE_USDM_FEE_TIERS.map((t) => `| ${t.tier} | ${pct(t.makerRate)} | ${pct(t.takerRate)} |`)
  return ['| Binance USDⓈ-M tier | maker | taker |', '|---|---|---|', ...rows].join('\n')
}
