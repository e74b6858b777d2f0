import type { StrategyPosition } from '../client/operations.js'
import { NONE, type Output, table } from './output.js'
import type { PriceOf } from './prices.js'

/**
 * The protective orders resting on the exchange for each live position (the positions answer's
 * protective_orders), as a second table under the positions: they close a position while Perpetua is down, so
 * a position that has none, or whose orders could not be read, is said on stderr. Dry runs hold no such orders.
 */
export function printProtectiveOrders(output: Output, positions: readonly StrategyPosition[], priceOf: PriceOf): void {
  const live = positions.filter((p) => p.mode === 'live')
  for (const p of live) {
    if (p.protective_orders_error !== null) output.err(`${p.symbol}: protective orders unknown: ${p.protective_orders_error}`)
    else if (p.protective_orders?.length === 0) output.err(`${p.symbol}: no protective order rests on the exchange`)
  }
  const rows = live.flatMap((p) =>
    (p.protective_orders ?? []).map((o) => [
      p.symbol,
      o.kind.replace('_', ' '),
      o.type,
      o.side,
      o.trigger_price !== null ? priceOf(p.symbol, o.trigger_price) : o.activate_price !== null ? `activates at ${priceOf(p.symbol, o.activate_price)}` : NONE,
      o.callback_rate !== null ? `${o.callback_rate}%` : NONE,
      o.working_type,
      o.close_position ? 'close position' : (o.quantity ?? NONE),
      o.status,
      o.client_algo_id,
    ]),
  )
  if (rows.length === 0) return
  output.out('protective orders on the exchange:')
  output.out(table(['symbol', 'kind', 'type', 'side', 'trigger', 'callback', 'working type', 'qty', 'status', 'client algo id'], rows))
}
