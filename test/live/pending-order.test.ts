import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { PaperBroker } from '../../src/live/brokers/paper-broker.js'
import { PAPER_FEES } from '../../src/live/brokers/paper-setup.js'
import type { RunRow } from '../../src/live/queries.js'
import { outcomeRows } from '../../src/live/record-outcome.js'
import { findTemplate } from '../../src/templates/registry.js'
import type { SingleSymbolTemplate } from '../../src/templates/types.js'
import { listedOrder } from '../../web/src/pages/strategies/listed-order.js'
import { barAt, BTCUSDT_RULES, HOUR, randomWalk, validParams } from '../engine/helpers.js'

const START = Date.UTC(2025, 5, 1)
const RUN = { strategy_id: 'strat_0000abcd', run: 1, user_id: 1, symbol: 'BTCUSDT', symbols: ['BTCUSDT'] } as RunRow
const NOW = new Date(Date.UTC(2026, 10, 29, 10)) // our server's clock, a year and a half after the bars

/**
 * An order before it fills (issue 35, one clock per column): the intent a close states is on the exchange's
 * clock (stated_at, the bar's close) and carries the side and quantity it will send, sized at that close as
 * the runner sizes it (PaperBroker.desiredQty); the fill at the next open, at the same price, is that size.
 */
describe('a pending order', () => {
  it("is stated at its bar's close on the exchange's clock with the side and quantity its fill at the next open has", () => {
    const bars = randomWalk('BTCUSDT', 7, 2_000, START, HOUR, 60_000, 0.01)
    const broker = new PaperBroker({ template: findTemplate('sma_cross') as SingleSymbolTemplate, params: validParams('sma_cross', { fast: 5, slow: 20, allow_short: true }), symbol: 'BTCUSDT', intervalMs: HOUR, rules: BTCUSDT_RULES, capital: 10_000, leverage: 3, fees: PAPER_FEES, protect: undefined })
    let counters = { intent: 1, trade: 1 }
    let pending: { id: string; side: string | null; qty: string | null; statedAt: number; close: number } | undefined
    let compared = 0
    for (let i = 0; i < bars.openTime.length; i++) {
      const bar = barAt(bars, i)
      const outcome = broker.onClosedBar(bar, [])
      const closeTime = bar.openTime + HOUR
      const sizedQty = outcome.newTarget === outcome.newTarget ? broker.desiredQty(outcome.newTarget, broker.lastClose, closeTime) : undefined
      const rows = outcomeRows({ run: RUN, now: NOW, closeTime, sizedQty, pendingOrder: pending?.id ?? null, totals: { realized: 0, unrealized: 0 }, rules: BTCUSDT_RULES }, outcome, counters)
      counters = rows.counters
      if (pending && rows.settle?.status === 'filled' && bar.open === pending.close) {
        assert.deepEqual([rows.settle.side, rows.settle.qty, rows.settle.filled_at?.getTime()], [pending.side, pending.qty, pending.statedAt], `the order stated at ${new Date(pending.statedAt).toISOString()}`)
        compared++
      }
      if (rows.settle) pending = undefined
      if (rows.order) {
        const order = rows.order
        assert.equal(order.stated_at?.getTime(), closeTime)
        assert.equal(order.created_at, NOW)
        const listed = listedOrder({ ...order, run: 1, side: order.side ?? null, qty: order.qty ?? null, price: null, fee: null, created_at: NOW.toISOString(), filled_at: null, stated_at: order.stated_at!.toISOString(), exit_reason: null })
        assert.deepEqual([listed.time, listed.clock], [new Date(closeTime).toISOString(), 'exchange'])
        pending = { id: order.client_order_id, side: order.side ?? null, qty: order.qty ?? null, statedAt: closeTime, close: bar.close }
      }
    }
    assert.ok(compared >= 10, `${compared} pending orders compared with their fills`)
  })

  it("shows our server's clock, and says so, only for an order no bar stated (a pause's close)", () => {
    const close = listedOrder({ client_order_id: 'pp-0000abcd-1-9', run: 1, symbol: 'BTCUSDT', status: 'new', reduce_only: true, target: '0', side: null, qty: null, price: null, fee: null, created_at: NOW.toISOString(), filled_at: null, stated_at: null, exit_reason: null })
    assert.deepEqual([close.time, close.clock], [NOW.toISOString(), 'server'])
  })
})
