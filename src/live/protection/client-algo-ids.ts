import type { ProtectiveOrdersTable } from '../../db/schema.js'

export type ProtectiveKind = ProtectiveOrdersTable['kind']

const LETTER: Record<ProtectiveKind, string> = { stop_loss: 's', take_profit: 't', trailing_stop: 'r' }
const KIND: Record<string, ProtectiveKind> = { s: 'stop_loss', t: 'take_profit', r: 'trailing_stop' }

/**
 * What every protective order of a strategy starts with, whatever the run: `pa-<strategy hex>-`. Apart from
 * the plain orders' `pp-<hex>-` (clientOrderIdPrefix), so a triggered child order (whose client order id is
 * its algo order's clientAlgoId) is never taken for the run's pending MARKET order nor for a foreign order.
 */
export function clientAlgoIdPrefix(strategyId: string): string {
  return `pa-${strategyId.slice('strat_'.length)}-`
}

/**
 * Deterministic clientAlgoId (≤ 36 characters of Binance's `^[\.A-Z\:/a-z0-9_-]{1,36}$`): the prefix, the
 * kind's letter (s stop loss, t take profit, r trailing stop) and the strategy's protective sequence number,
 * which is never reused (protective_orders UNIQUE (strategy_id, seq)): at most 3 + 8 + 1 + 1 + 10 characters.
 */
export function clientAlgoId(strategyId: string, kind: ProtectiveKind, seq: number): string {
  return `${clientAlgoIdPrefix(strategyId)}${LETTER[kind]}${seq}`
}

/** The kind of protection a client (algo or child order) id of this strategy names; undefined when it is none of its protective orders. */
export function protectiveKindOf(prefix: string, id: string): ProtectiveKind | undefined {
  if (!id.startsWith(prefix)) return undefined
  const rest = id.slice(prefix.length)
  return /^[str]\d+$/.test(rest) ? KIND[rest[0]!] : undefined
}
