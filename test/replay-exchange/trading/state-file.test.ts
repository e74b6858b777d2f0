import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { tempDir } from '../../support/database.js'
import { startTradingExchange } from './support.js'

describe('replay exchange trading: --state keeps accounts across restarts', () => {
  it('restores balances, positions, orders and trades written at close, and refuses a foreign file', async () => {
    const dir = tempDir('replay-state')
    const stateFile = path.join(dir, 'state.json')
    try {
      const first = await startTradingExchange({ stateFile })
      const keys = await first.account({ USDT: '5000' })
      const placed = await first.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: 'BUY', type: 'MARKET', quantity: '0.010' })
      assert.equal(placed.status, 200)
      const before = (await first.call(keys, 'GET', '/fapi/v2/balance')).body
      await first.close()
      assert.ok(fs.existsSync(stateFile))
      assert.deepEqual(fs.readdirSync(dir), ['state.json'], 'no temporary file left behind')

      const second = await startTradingExchange({ stateFile })
      try {
        assert.deepEqual((await second.call(keys, 'GET', '/fapi/v2/balance')).body, before)
        const [position] = (await second.call(keys, 'GET', '/fapi/v2/positionRisk', { symbol: 'BTCUSDT' })).body
        assert.equal(position.positionAmt, '0.010')
        assert.equal((await second.call(keys, 'GET', '/fapi/v1/order', { symbol: 'BTCUSDT', orderId: placed.body.orderId })).body.status, 'FILLED')
        const next = await second.call(keys, 'POST', '/fapi/v1/order', { symbol: 'BTCUSDT', side: 'SELL', type: 'MARKET', quantity: '0.010' })
        assert.ok(next.body.orderId > placed.body.orderId, 'order ids continue')
      } finally {
        await second.close()
      }
      fs.writeFileSync(stateFile, '{"not":"ours"}')
      await assert.rejects(startTradingExchange({ stateFile }), /not a replay-exchange state file/)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
