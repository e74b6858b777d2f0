import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { sql } from 'kysely'
import { findOrCreateUserByEmail } from '../../src/auth/queries.js'
import { backends, openTestDatabase, type TestDatabase } from '../support/database.js'

const MIGRATION = fs.readFileSync(path.resolve(import.meta.dirname, '../../src/db/migrations/0014_exact_decimals.sql'), 'utf8')

for (const backend of backends()) {
  describe(`0014 exact decimals (${backend})`, () => {
    let database: TestDatabase
    before(async () => {
      database = await openTestDatabase(backend)
    })
    after(() => database.close())

    it('rounds the float noise stored before issue 21 to 8 places and leaves exact values as they are', async () => {
      const db = database.handle.db
      const userId = await findOrCreateUserByEmail(db, 'noise@example.test')
      const now = new Date()
      const strategy = (id: string, pnl: string) => ({
        id, user_id: userId, name: id, template_id: 'sma_cross', params: '{}', symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000', leverage: 1, created_at: now, updated_at: now, stat_total_pnl: pnl,
      })
      await db.insertInto('strategies').values([strategy('strat_0000000a', '-3.6744833999999185'), strategy('strat_0000000b', '12.5')]).execute()
      const order = { strategy_id: 'strat_0000000a', run: 1, symbol: 'BTCUSDT', reduce_only: false, status: 'filled' as const, side: 'buy' as const, created_at: now, filled_at: now }
      await db.insertInto('strategy_orders').values([
        { ...order, client_order_id: 'pp-0000000a-1-1', intent: 1, target: '0.30000000000000004', qty: '0.018', price: '106519.20000000001', fee: '1.9245761999999997' },
        { ...order, client_order_id: 'pp-0000000a-1-2', intent: 2, target: '-1', qty: '0.018', price: '106519.2', fee: '0.96236' },
      ]).execute()
      const trade = { strategy_id: 'strat_0000000a', run: 1, symbol: 'BTCUSDT', side: 'buy' as const, entry_time: now, exit_time: now, exit_reason: 'signal' }
      await db.insertInto('strategy_trades').values([
        { ...trade, id: 1, entry_price: '2334.2199999999993', exit_price: '2340.1', qty: '0.30000000000000004', fee: '0.1', funding: '-0.000000001', pnl: '-2.5489970999999474' },
      ]).execute()

      await sql.raw(MIGRATION).execute(db)

      const text = (column: string, table: string) => sql<{ v: string | null }>`SELECT ${sql.ref(column)}::text AS v FROM ${sql.table(table)} ORDER BY 1`.execute(db).then((r) => r.rows.map((row) => row.v))
      assert.deepEqual(await text('stat_total_pnl', 'strategies'), ['-3.6744834', '12.5'])
      assert.deepEqual(await text('price', 'strategy_orders'), ['106519.2', '106519.2'])
      assert.deepEqual(await text('fee', 'strategy_orders'), ['0.96236', '1.9245762'])
      assert.deepEqual(await text('target', 'strategy_orders'), ['-1', '0.3'])
      const [row] = (await sql<Record<string, string>>`SELECT entry_price::text, exit_price::text, qty::text, fee::text, funding::text, pnl::text FROM strategy_trades`.execute(db)).rows
      assert.deepEqual(row, { entry_price: '2334.22', exit_price: '2340.1', qty: '0.3', fee: '0.1', funding: '0', pnl: '-2.5489971' })
    })
  })
}
