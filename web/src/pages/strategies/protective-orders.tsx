import type { StrategyPosition } from '../../api/types.js'

type ProtectiveOrder = NonNullable<StrategyPosition['protective_orders']>[number]

/** How an order's kind reads: the run's own stop, target or trailing stop, or one it did not place. */
const KIND_LABELS: Record<ProtectiveOrder['kind'], string> = { stop_loss: 'stop loss', take_profit: 'take profit', trailing_stop: 'trailing stop', other: 'not this run’s' }

/**
 * A live position's protective orders as the exchange holds them (GET …/positions, protective_orders): what
 * closes it while Perpetua is down. A dry run's levels are simulated and shown beside the position instead.
 */
export function ProtectiveOrders({ position: p, tick }: { position: Pick<StrategyPosition, 'symbol'> & Partial<Pick<StrategyPosition, 'mode' | 'protective_orders' | 'protective_orders_error'>>; tick: (value: string) => string }) {
  // A position just opened (from a stream message) shows its orders once the positions are re-read.
  if (p.mode !== 'live' || p.protective_orders === undefined) return null
  if (p.protective_orders_error) {
    return (
      <p class="warn" data-testid="protective-orders" data-symbol={p.symbol} data-state="unknown">
        Protective orders on the exchange: unknown ({p.protective_orders_error})
      </p>
    )
  }
  const orders = p.protective_orders ?? []
  if (orders.length === 0) {
    return (
      <p class="muted" data-testid="protective-orders" data-symbol={p.symbol} data-state="none">
        No protective order rests on the exchange for {p.symbol}.
      </p>
    )
  }
  return (
    <ul class="protective-orders" data-testid="protective-orders" data-symbol={p.symbol} data-state="resting" aria-label={`Protective orders on the exchange for ${p.symbol}`}>
      {orders.map((o) => (
        <li key={o.client_algo_id} data-testid="protective-order" data-kind={o.kind} data-type={o.type} data-trigger={o.trigger_price ?? ''} data-working-type={o.working_type} data-status={o.status}>
          {KIND_LABELS[o.kind]}: {o.type} {o.side} {where(o, tick)} on {o.working_type} · {o.close_position ? 'closes the position' : `qty ${o.quantity ?? '-'}`} ·{' '}
          <span class="badge">{o.status}</span>
        </li>
      ))}
    </ul>
  )
}

/** Where it triggers: its price, or for a trailing stop where it starts and how far it follows. */
function where(o: ProtectiveOrder, tick: (value: string) => string): string {
  if (o.trigger_price) return `at ${tick(o.trigger_price)}`
  const follows = o.callback_rate ? `${o.callback_rate}% behind the best price` : ''
  return o.activate_price ? `from ${tick(o.activate_price)}, ${follows}` : follows
}
