import type { StrategyOrder } from '../../api/types.js'

/** An order as the orders table shows it: one clock per column. */
export type Order = Pick<StrategyOrder, 'client_order_id' | 'symbol' | 'status' | 'side' | 'qty' | 'price' | 'fee'> & { time: string; clock: 'exchange' | 'server' }

/**
 * An order from the orders list. Its time is the exchange's before and after it fills: filled_at once filled,
 * until then stated_at (the close of the bar that stated it); only an order no bar stated (a pause's close)
 * shows our server's created_at.
 */
export function listedOrder(o: StrategyOrder): Order {
  const exchangeTime = o.filled_at ?? o.stated_at
  return { ...o, time: exchangeTime ?? o.created_at, clock: exchangeTime ? 'exchange' : 'server' }
}
