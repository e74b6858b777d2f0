import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { updateStatsOf } from '../../src/live/queries.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'

const strategy = { name: 'cached', template_id: 'sma_cross', params: {}, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' }

// Embedded mode caches strategy reads (services.strategyCache). A deployed strategy's runner writes its
// stats (and may move it into error) without the API, so a read must show them at once.
for (const backend of backends()) {
  describe(`strategy reads and the runners' writes (${backend})`, () => {
    let t: TestApp
    before(async () => {
      t = await startTestApp(backend)
    })
    after(() => t.close())

    it("shows a deployed strategy's stats as its runner writes them, without waiting for a cache entry to expire", async () => {
      const key = await t.createKey(['strategies:read', 'strategies:write'])
      const id = (await t.signed(key, 'POST', '/v1/strategies', strategy)).json().id as string
      // Deployed as the deploy transaction leaves it (the route would also drop the entry; here nothing was read yet).
      await sql`UPDATE strategies SET status = 'deployed', deployed_at = now() WHERE id = ${id}`.execute(t.database.handle.db)
      const deployed = await t.signed(key, 'GET', `/v1/strategies/${id}`)
      assert.equal(deployed.json().status, 'deployed')
      assert.equal(deployed.json().stats.total_trades, 0)
      for (const trades of [1, 2]) {
        await updateStatsOf(t.database.handle.db, [{ strategyId: id, openPositions: 1, totalPnl: `${trades}.5`, closedTrades: 1, winningTrades: 1 }])
        const read = await t.signed(key, 'GET', `/v1/strategies/${id}`)
        assert.deepEqual(read.json().stats, { open_positions: 1, total_pnl: `${trades}.5`, total_trades: trades, win_rate: '1' })
      }
      // The runner's move into error (run-error.ts markError: only from deployed).
      await sql`UPDATE strategies SET status = 'error' WHERE id = ${id} AND status = 'deployed'`.execute(t.database.handle.db)
      assert.equal((await t.signed(key, 'GET', `/v1/strategies/${id}`)).json().status, 'error')
    })
  })
}
