import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { lacksScope } from '../../src/auth/scopes.js'
import { citesApi, withoutApiAdvice } from '../../web/src/components/api-advice.js'

/** What the dashboard shows of an API message (issue 35): the message less its advice to API callers. */
describe('withoutApiAdvice', () => {
  it("drops a NO_DATA message's pointer to the coverage endpoint, keeping what the exchange holds", () => {
    const message = 'no BTCUSDT 1h bars between 2015-01-01T00:00Z and 2015-01-31T00:00Z; BTCUSDT 1h holds 2019-09-08T17:00Z to 2025-06-30T23:00Z. Choose a range inside the coverage (GET /v1/backtest/coverage tells it).'
    assert.equal(withoutApiAdvice(message), 'no BTCUSDT 1h bars between 2015-01-01T00:00Z and 2015-01-31T00:00Z; BTCUSDT 1h holds 2019-09-08T17:00Z to 2025-06-30T23:00Z. Choose a range inside the coverage.')
  })

  it('drops a clause that says which call to make, keeping the rest of the sentence', () => {
    assert.equal(withoutApiAdvice('webhook wh_1 is broken after 5 consecutive failed deliveries; reactivate it with PATCH /v1/webhooks/wh_1 {"status":"active"} first'), 'webhook wh_1 is broken after 5 consecutive failed deliveries')
  })

  it('a missing scope keeps what to do, without the call', () => {
    const shown = withoutApiAdvice(lacksScope('backtests:write'))
    assert.equal(citesApi(shown), false, shown)
    assert.match(shown, /lacks the scope backtests:write/)
  })

  it('leaves a message without advice, and its own parentheses, as they are', () => {
    for (const message of ['template sma_cross: fast must be below slow (3 ≥ 2).', 'the exchange did not tell its time (GET /fapi/v1/time), which decides which bars are closed']) assert.equal(withoutApiAdvice(message), message)
  })
})
