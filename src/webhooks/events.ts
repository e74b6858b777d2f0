/** The event types a webhook may subscribe to (spec "Events"). */
export const EVENT_TYPES = [
  'strategy.deployed',
  'strategy.position_opened',
  'strategy.error',
  // Our additions (issue 11): a pause, and the close that ends a position.
  'strategy.paused',
  'strategy.position_closed',
  'backtest.job_done',
  // Our addition (issue 23): a parameter sweep ended.
  'backtest.sweep_done',
  'account.balance_low',
  'account.api_key_rotated',
  'webhook.test',
] as const

export type EventType = (typeof EVENT_TYPES)[number]

/** A wildcard matches the concrete events of its group; `*` matches every event. */
export const WILDCARDS = ['strategy.*', 'backtest.*', 'account.*', '*'] as const

export const TEST_EVENT_TYPE = 'webhook.test'
export const BALANCE_LOW = 'account.balance_low'

export function isEventType(value: string): value is EventType {
  return (EVENT_TYPES as readonly string[]).includes(value)
}

/** A catalog type or a wildcard: what `events` of a subscription and the list's `event` filter accept. */
export function isSubscribable(value: string): boolean {
  return isEventType(value) || (WILDCARDS as readonly string[]).includes(value)
}

/**
 * The subscription entries that receive events of `type`: itself, its group's wildcard and `*`.
 * Concrete types beyond the catalog (the spec allows more) match their group the same way.
 */
export function subscriptionsMatching(type: string): string[] {
  const dot = type.indexOf('.')
  return dot > 0 ? [type, `${type.slice(0, dot)}.*`, '*'] : [type, '*']
}

/**
 * The subscription entries a list filter `event=<filter>` finds: a concrete type finds what receives
 * it; a wildcard finds every subscription that receives any event of its group (for `*`, all).
 */
export function subscriptionsFoundBy(filter: string): string[] {
  if (filter === '*') return [...EVENT_TYPES, ...WILDCARDS]
  if (filter.endsWith('.*')) {
    const group = filter.slice(0, -1)
    return [filter, '*', ...EVENT_TYPES.filter((type) => type.startsWith(group))]
  }
  return subscriptionsMatching(filter)
}

/** True when a subscription list receives events of `type`. */
export function receives(subscriptions: readonly string[], type: string): boolean {
  return subscriptionsMatching(type).some((entry) => subscriptions.includes(entry))
}

/** Dummy `data` for a test delivery of a catalog type (POST /v1/webhooks/{id}/test). */
export function testEventData(type: EventType, webhook: { id: string; balanceLowThreshold: string | null }, at: Date): Record<string, unknown> {
  const time = at.toISOString()
  switch (type) {
    case 'strategy.deployed':
      return { strategy_id: 'strat_00000000', name: 'example strategy', status: 'deployed', deployed_at: time, dry_run: false }
    case 'strategy.position_opened':
      return { strategy_id: 'strat_00000000', symbol: 'BTCUSDT', side: 'buy', qty: '0.010', entry_price: '65000.00', opened_at: time }
    case 'strategy.paused':
      return { strategy_id: 'strat_00000000', close_positions: true }
    case 'strategy.position_closed':
      return { strategy_id: 'strat_00000000', symbol: 'BTCUSDT', side: 'buy', qty: '0.010', entry_price: '65000.00', exit_price: '65500.00', pnl: '4.35', exit_reason: 'signal', time }
    case 'strategy.error':
      return { strategy_id: 'strat_00000000', code: 'EXAMPLE_ERROR', message: 'an example error from a test delivery' }
    case 'backtest.job_done':
      return { job_id: 'bt_00000000', status: 'done', template_id: 'sma_cross', metrics: { sharpe: '1.23', max_drawdown: '-0.12', total_trades: 42 }, warnings: [] }
    case 'backtest.sweep_done':
      return {
        sweep_id: 'sw_00000000',
        status: 'done',
        template_id: 'sma_cross',
        best: { run_id: 'r17', params: { fast: 10, slow: 50, allow_short: false }, metrics: { sharpe: '1.23', max_drawdown: '-0.12', total_trades: 42 } },
      }
    case 'account.balance_low':
      return { asset: 'USDT', available: '50.00', threshold: webhook.balanceLowThreshold ?? '100' }
    case 'account.api_key_rotated':
      return { api_key: 'pk_000000000000000000000000', rotated_at: time }
    case 'webhook.test':
      return { webhook_id: webhook.id, message: 'This is a test delivery from Perpetua.' }
  }
}
