import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { SCOPES } from '../../src/auth/scopes.js'
import { PerpetuaClient } from '../../src/client/index.js'
import { insertWebhook } from '../../src/webhooks/queries.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { seedDoneSweep } from '../support/big-sweep.js'
import { backends } from '../support/database.js'
import type { KeyPair } from '../support/signing.js'
import type { OpenApiDocument } from './openapi-probes.js'

const UNLIMITED = '1000000000'
const SWEEP = 'sw_0000c0c0'
const WEBHOOK = 'wh_0000c0c0'
const strategy = { name: 'cursors', template_id: 'sma_cross', params: { fast: 10 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' }

/**
 * Positions no page ever handed out, as the JSON text inside a cursor (written by hand: JavaScript would
 * round 9007199254740993 on the way out): each of our cursor shapes with numbers beyond what the database
 * holds (issue 37: a run number of 2^53 + 1 or 1e300 reached /runs' query and answered 500), and shapes
 * of one route's cursor sent to another's.
 */
const POSITIONS = [
  '["run",null,9007199254740993]',
  '["run",null,1e300]',
  '["run",null,-1]',
  '["run",null,2147483648]',
  '["objective",1e300,1e300]',
  '["objective",1e308,1]',
  '["objective",-1e308,9007199254740993]',
  '["columns",9007199254740993]',
  '["columns",1e300]',
  '["columns",0]',
  '["columns",4]',
  '["2026-01-01T00:00:00.000Z","9007199254740993"]',
  '["2026-01-01T00:00:00.000Z","1e300"]',
  '["+275760-09-13T00:00:00.000Z","x"]',
  '1e300',
  '9007199254740993',
  'null',
  '{"run":1}',
]

for (const backend of backends()) {
  describe(`crafted cursors on every route that takes one (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    let operations: { path: string; url: string }[]

    before(async () => {
      t = await startTestApp(backend, { RATE_LIMIT_WEIGHT_PER_MINUTE: UNLIMITED })
      const email = `cursors-${backend}@example.test`
      key = await t.createKey([...SCOPES], email)
      const db = t.database.handle.db
      const user = await db.selectFrom('users').select('id').where('email', '=', email).executeTakeFirstOrThrow()
      // Every {id} names a record of the caller's, so a cursor that slipped through would reach the query.
      const created = await t.signed(key, 'POST', '/v1/strategies', strategy)
      assert.equal(created.statusCode, 200, created.body)
      await seedDoneSweep(db, user.id, SWEEP, 3, 10)
      await insertWebhook(db, { id: WEBHOOK, userId: user.id, url: 'https://example.com/hook', events: ['*'], description: null, balanceLowThreshold: null, secretEnc: 'x', at: new Date() })
      const ids: Record<string, string> = { '/v1/strategies': created.json().id, '/v1/backtest/sweeps': SWEEP, '/v1/webhooks': WEBHOOK }
      const document = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json() as OpenApiDocument
      operations = Object.entries(document.paths)
        .filter(([, methods]) => methods.get?.parameters?.some((p) => p.in === 'query' && p.name === 'cursor'))
        .map(([path]) => {
          const family = Object.keys(ids).find((prefix) => path.startsWith(`${prefix}/{id}`))
          return { path, url: family ? path.replace('{id}', ids[family]!) : path }
        })
    })
    after(() => t.close())

    it('finds the list routes in /openapi.json', () => {
      const paths = operations.map((o) => o.path)
      for (const path of ['/v1/strategies', '/v1/strategies/{id}/orders', '/v1/strategies/{id}/trades', '/v1/backtest/jobs', '/v1/backtest/sweeps', '/v1/backtest/sweeps/{id}/runs', '/v1/backtest/sweeps/{id}/returns', '/v1/webhooks', '/v1/webhooks/{id}/deliveries']) {
        assert.ok(paths.includes(path), `${path} takes no cursor in /openapi.json`)
      }
      assert.ok(operations.every((o) => !o.url.includes('{')), 'a route whose {id} this test cannot fill')
    })

    it('answers each with a page or a 400 naming cursor, never a 500', async () => {
      const failures: string[] = []
      for (const { url } of operations) {
        // /runs reads each sort's cursor; returns' limit asks for its pages.
        const queries = url.endsWith('/runs') ? ['sort=run&', 'sort=objective&'] : url.endsWith('/returns') ? ['limit=2&'] : ['']
        for (const query of queries) {
          for (const position of POSITIONS) {
            const res = await t.signed(key, 'GET', `${url}?${query}cursor=${Buffer.from(position).toString('base64url')}`)
            // A finite objective is a position a page could have had (["objective",1e308,1] on sort=objective): a page, not a refusal.
            if (res.statusCode === 200) continue
            const error = res.statusCode === 400 ? res.json().error : undefined
            if (error?.code !== 'INVALID_PARAMETER' || error.field !== 'cursor' || !/^cursor is not a value returned as next_cursor/.test(error.message)) {
              failures.push(`${url}?${query} ${position} → ${res.statusCode} ${res.body.slice(0, 160)}`)
            }
          }
        }
      }
      assert.deepEqual(failures, [])
      // Issue 37's own: a run number beyond the database's integer.
      for (const position of ['["run",null,9007199254740993]', '["run",null,1e300]']) {
        const res = await t.signed(key, 'GET', `/v1/backtest/sweeps/${SWEEP}/runs?cursor=${Buffer.from(position).toString('base64url')}`)
        assert.equal(res.statusCode, 400, `${position}: ${res.body}`)
        assert.equal(res.json().error.message, 'cursor is not a value returned as next_cursor for this sort')
      }
    })

    it('still follows the cursors the routes hand out', async () => {
      const runs = await t.signed(key, 'GET', `/v1/backtest/sweeps/${SWEEP}/runs?limit=2`)
      const next = await t.signed(key, 'GET', `/v1/backtest/sweeps/${SWEEP}/runs?limit=2&cursor=${runs.json().next_cursor}`)
      assert.deepEqual(next.json().data.map((run: { run_id: string }) => run.run_id), ['r3'])
      const page = await t.signed(key, 'GET', `/v1/backtest/sweeps/${SWEEP}/returns?limit=2`)
      const link = /^<([^>]+)>; rel="next"$/.exec(page.headers.link as string)![1]!
      assert.deepEqual((await t.signed(key, 'GET', link)).json().run_ids, ['r3'])
      // The client follows the same Link header through every column.
      const address = await t.app.listen({ host: '127.0.0.1', port: 0 })
      const client = new PerpetuaClient({ baseUrl: address, apiKey: key.api_key, apiSecret: key.api_secret, now: t.clock.now })
      const pages: string[][] = []
      for await (const matrix of client.sweeps.returnsPages(SWEEP, { limit: 2 })) pages.push(matrix.run_ids)
      assert.deepEqual(pages, [['r1', 'r2'], ['r3']])
    })
  })
}
