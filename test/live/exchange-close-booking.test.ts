import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ExchangeBroker } from '../../src/live/brokers/exchange-broker.js'
import { PaperBroker } from '../../src/live/brokers/paper-broker.js'
import { PAPER_FEES } from '../../src/live/brokers/paper-setup.js'
import { bracketsFor } from '../../src/market/leverage-brackets.js'
import { UpstreamClient } from '../../src/market/upstream-client.js'
import { findTemplate } from '../../src/templates/registry.js'
import type { SingleSymbolTemplate } from '../../src/templates/types.js'
import { BinanceTradingClient } from '../../src/trading/binance/trading-client.js'

const T = Date.UTC(2025, 5, 17, 8)
const setup = {
  template: findTemplate('sma_cross') as SingleSymbolTemplate,
  params: { fast: 3, slow: 8, allow_short: true },
  symbol: 'BTCUSDT',
  intervalMs: 60_000,
  rules: { stepSize: 0.001, minQty: 0.001, minNotional: 100, tickSize: 0.1, brackets: bracketsFor('BTCUSDT').brackets },
  capital: 10_000,
  leverage: 5,
  fees: PAPER_FEES,
}

/** A live broker whose client is never called here: booking a fill the exchange reported is arithmetic on the ledger. */
function broker(): ExchangeBroker {
  return new ExchangeBroker(new PaperBroker(setup), new BinanceTradingClient(null as unknown as UpstreamClient, { apiKey: 'k', apiSecret: 's' }, Date.now), setup)
}
const liquidation = (side: 'BUY' | 'SELL', qty: number, price: number, fee: number) => ({ orderId: 7, tradeId: 9, clientOrderId: `autoclose-${T}`, side, qty, price, fee, time: T + 1000, reason: 'liquidation' as const })

describe('booking an exchange-side close into a live ledger', () => {
  it('closes the position as a liquidation trade, settling no intent of the run', () => {
    const b = broker()
    b.paper.fillAt(0.05, 100_000, T)
    const outcome = b.bookExchangeClose(liquidation('SELL', 0.05, 95_000, 2.375))
    assert.equal(outcome.filledIntent, undefined, 'no order of ours was filled')
    assert.equal(outcome.trades.length, 1)
    assert.equal(outcome.trades[0]!.exitReason, 'liquidation')
    assert.equal(outcome.trades[0]!.exitPrice, 95_000)
    assert.ok(Math.abs(outcome.trades[0]!.fee - (0.05 * 100_000 * PAPER_FEES.takerRate + 2.375)) < 1e-9)
    assert.equal(b.qty, 0)
  })

  it("a close racing the run's own reversal, booked after it, still leaves the ledger holding what the exchange holds", () => {
    // On the exchange: long 0.05, liquidated (SELL 0.05), then the run's reversal SELL 0.10 fills: short 0.10.
    // The run booked its reversal first, from +0.05: it holds −0.05; the liquidation's fill then arrives.
    const b = broker()
    b.paper.fillAt(0.05, 100_000, T)
    b.paper.fillAt(-0.05, 99_900, T + 2000)
    const outcome = b.bookExchangeClose(liquidation('SELL', 0.05, 95_000, 2.375))
    assert.equal(outcome.filledIntent, undefined)
    assert.equal(b.qty, -0.1, 'the exchange holds −0.10, and so does the ledger')
  })

  it('a fill past what the ledger holds closes only what it holds', () => {
    const b = broker()
    b.paper.fillAt(-0.02, 100_000, T)
    const outcome = b.bookExchangeClose({ ...liquidation('BUY', 0.05, 101_000, 0), clientOrderId: 'adl_autoclose', reason: 'adl' })
    assert.equal(outcome.trades[0]!.exitReason, 'adl')
    assert.equal(b.qty, 0)
  })
})
