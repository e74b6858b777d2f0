import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BINANCE_BTCUSDT_BRACKETS } from '../../src/binance-formats/leverage-brackets.js'
import { withAccountBrackets } from '../../src/live/exchange/account-brackets.js'
import { RunFailure } from '../../src/live/exchange/run-failure.js'
import { bracketsFor } from '../../src/market/leverage-brackets.js'
import { BinanceTradingClient } from '../../src/trading/binance/trading-client.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { account } from './live-accounts.js'

const RULES = { stepSize: 0.001, minQty: 0.001, minNotional: 100, tickSize: 0.1, brackets: BINANCE_BTCUSDT_BRACKETS }

describe("a live run's margin tiers are its account's (GET /fapi/v1/leverageBracket on the replay exchange)", () => {
  let t: TestApp
  const holder = account('TIERS')
  before(async () => {
    t = await startTestApp('pglite', {}, { replay: { accounts: [{ ...holder, balances: { USDT: '1000' } }] } })
  })
  after(() => t.close())
  const client = (a: { apiKey: string; secretKey: string }) => new BinanceTradingClient(t.services.market.client, { apiKey: a.apiKey, apiSecret: a.secretKey }, Date.now)

  it("replaces the rules' tiers with the account's answer for the symbol", async () => {
    const xrp = await withAccountBrackets(RULES, client(holder), 'XRPUSDT')
    assert.deepEqual(xrp.brackets, bracketsFor('XRPUSDT').brackets, "the exchange's XRPUSDT tiers, not the BTCUSDT sample the rules came with")
    assert.equal(xrp.brackets[0]!.initialLeverage, 75)
    assert.deepEqual({ ...xrp, brackets: undefined }, { ...RULES, brackets: undefined }, 'the filters are kept')
  })

  it('a refused key is the run failure KEY_REVOKED', async () => {
    await assert.rejects(withAccountBrackets(RULES, client(account('NOBODY')), 'BTCUSDT'), (error: unknown) => error instanceof RunFailure && error.code === 'KEY_REVOKED')
  })
})
