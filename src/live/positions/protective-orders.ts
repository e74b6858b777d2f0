import type { SymbolRules } from '../../engine/types.js'
import { decimal, price, quantity } from '../../http/decimals.js'
import type { BinanceAlgoOrder } from '../../trading/binance/algo-orders.js'
import type { BinanceTradingClient } from '../../trading/binance/trading-client.js'
import { clientAlgoIdPrefix, protectiveKindOf } from '../protection/client-algo-ids.js'
import type { ProtectiveOrder } from '../schemas.js'

/** A position's protective orders as the exchange holds them, or why they could not be read. */
export type ExchangeProtection = { orders: ProtectiveOrder[] } | { error: string }

/**
 * The untriggered conditional orders resting on `symbol` for the account (GET /fapi/v1/openAlgoOrders, weight 1),
 * each as the positions answer shows it. A refusal or an unreachable exchange is an answer, not a failure of the
 * positions request: the position is still shown, with the reason.
 */
export async function readProtection(client: BinanceTradingClient, strategyId: string, symbol: string, rules: SymbolRules): Promise<ExchangeProtection> {
  const answer = await client.algo.open(symbol)
  if (answer.kind === 'rejected') return { error: `the exchange refused to list the open algo orders: ${answer.code} ${answer.msg}` }
  if (answer.kind !== 'ok') return { error: `the exchange's open algo orders could not be read: ${answer.reason}` }
  if (!Array.isArray(answer.value)) return { error: 'the exchange answered the open algo orders with something other than a list' }
  const orders: ProtectiveOrder[] = []
  for (const order of answer.value) {
    const shown = present(order, strategyId, rules)
    if (!shown) return { error: `the exchange listed an algo order this service cannot read: ${JSON.stringify(order).slice(0, 200)}` }
    if (order.symbol === symbol) orders.push(shown)
  }
  return { orders }
}

/** One algo order in our words, its prices at the tick and its quantity at the step; undefined for a malformed one. */
function present(order: BinanceAlgoOrder, strategyId: string, rules: SymbolRules): ProtectiveOrder | undefined {
  if (typeof order !== 'object' || order === null) return undefined
  const { clientAlgoId, orderType, side, workingType, algoStatus, algoId } = order
  if (typeof clientAlgoId !== 'string' || typeof orderType !== 'string' || typeof workingType !== 'string' || typeof algoStatus !== 'string') return undefined
  if ((side !== 'BUY' && side !== 'SELL') || typeof algoId !== 'number' || !Number.isSafeInteger(algoId)) return undefined
  return {
    kind: protectiveKindOf(clientAlgoIdPrefix(strategyId), clientAlgoId) ?? 'other',
    type: orderType,
    side: side === 'BUY' ? 'buy' : 'sell',
    trigger_price: positive(order.triggerPrice, (v) => price(v, rules)),
    working_type: workingType,
    close_position: order.closePosition === true,
    reduce_only: order.reduceOnly === true,
    quantity: order.closePosition === true ? null : positive(order.quantity, (v) => quantity(v, rules)),
    activate_price: positive(order.activatePrice, (v) => price(v, rules)),
    callback_rate: positive(order.callbackRate, (v) => decimal(v, 2)),
    status: algoStatus,
    algo_id: algoId,
    client_algo_id: clientAlgoId,
  }
}

/** A decimal field Binance writes as "0" or "" (or leaves out) when it does not apply: null then. */
function positive(field: unknown, write: (value: number) => string): string | null {
  if (typeof field !== 'string' && typeof field !== 'number') return null
  const value = Number(field)
  return Number.isFinite(value) && value > 0 ? write(value) : null
}
