import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { BalanceWatcher } from '../../../src/live/balance-watch/balance-watcher.js'
import { insertWebhook } from '../../../src/webhooks/queries.js'
import { type SignedInUser, signIn } from '../../auth/bearer.js'
import { startTestApp, type TestApp } from '../../support/app.js'
import { backends } from '../../support/database.js'

const ACCOUNT = { apiKey: `WATCH${crypto.randomBytes(32).toString('hex')}`.slice(0, 64), secretKey: `WATCHS${crypto.randomBytes(32).toString('hex')}`.slice(0, 64) }
const QUIET = { apiKey: `QUIET${crypto.randomBytes(32).toString('hex')}`.slice(0, 64), secretKey: `QUIETS${crypto.randomBytes(32).toString('hex')}`.slice(0, 64) }

for (const backend of backends()) {
  describe(`account.balance_low watcher (${backend})`, () => {
    let t: TestApp
    let user: SignedInUser
    let other: SignedInUser
    let watcher: BalanceWatcher
    const events = async (userId: number) =>
      (await t.database.handle.db.selectFrom('events').selectAll().where('type', '=', 'account.balance_low').where('user_id', '=', userId).orderBy('seq').execute()).map(
        (e) => e.data as { asset: string; available: string; threshold: string },
      )

    before(async () => {
      t = await startTestApp(backend, {}, { replay: { accounts: [{ ...ACCOUNT, balances: { USDT: '10000', BNB: '1.5' } }, { ...QUIET, balances: { USDT: '10' } }] } })
      user = await signIn(t)
      other = await signIn(t)
      for (const [who, account] of [
        [user, ACCOUNT],
        [other, QUIET],
      ] as const) {
        t.clock.value = Date.now()
        const res = await t.app.inject({ method: 'POST', url: '/v1/exchange-keys', headers: who.headers, payload: { api_key: account.apiKey, api_secret: account.secretKey } })
        assert.equal(res.statusCode, 200, res.body)
      }
      const at = new Date()
      const secretEnc = t.services.secrets.seal('whsec_test')
      // Two subscriptions of the user: the watcher watches the higher threshold; the other user subscribes to nothing.
      await insertWebhook(t.database.handle.db, { id: 'wh_aaaaaaa1', userId: user.userId, url: 'https://127.0.0.1:9/a', events: ['account.balance_low'], description: null, balanceLowThreshold: '5000', secretEnc, at })
      await insertWebhook(t.database.handle.db, { id: 'wh_aaaaaaa2', userId: user.userId, url: 'https://127.0.0.1:9/b', events: ['account.*'], description: null, balanceLowThreshold: '1000', secretEnc, at })
      await insertWebhook(t.database.handle.db, { id: 'wh_aaaaaaa3', userId: other.userId, url: 'https://127.0.0.1:9/c', events: ['strategy.*'], description: null, balanceLowThreshold: null, secretEnc, at })
      watcher = new BalanceWatcher({ db: t.database.handle.db, secrets: t.services.secrets, upstream: t.services.market.client, log: pino({ level: 'silent' }) })
    })
    after(async () => {
      await watcher.stop()
      await t.close()
    })

    it('fires once when the available USDT falls below the threshold, and again only after it recovered', async () => {
      await watcher.tick()
      assert.deepEqual(await events(user.userId), [], 'nothing while 10000 ≥ 5000')
      t.replay!.accounts.fund(ACCOUNT.apiKey, 'USDT', '-6000')
      await watcher.tick()
      await watcher.tick()
      const first = await events(user.userId)
      assert.equal(first.length, 1, 'one event, not one per tick; none for the 1.5 BNB (a dollar threshold)')
      assert.equal(first[0]!.asset, 'USDT')
      assert.equal(Number(first[0]!.available), 4000)
      assert.equal(first[0]!.threshold, '5000')
      t.replay!.accounts.fund(ACCOUNT.apiKey, 'USDT', '6000')
      await watcher.tick()
      assert.equal((await events(user.userId)).length, 1, 'recovery re-arms without an event')
      t.replay!.accounts.fund(ACCOUNT.apiKey, 'USDT', '-9500')
      await watcher.tick()
      const fired = await events(user.userId)
      assert.equal(fired.length, 2)
      assert.equal(Number(fired[1]!.available), 500)
      assert.deepEqual(await events(other.userId), [], 'a user without the subscription is not watched (its 10 USDT would be below)')
    })

    it('two watchers at once (two processes) fire one event', async () => {
      const second = new BalanceWatcher({ db: t.database.handle.db, secrets: t.services.secrets, upstream: t.services.market.client, log: pino({ level: 'silent' }) })
      t.replay!.accounts.fund(ACCOUNT.apiKey, 'USDT', '9500')
      await watcher.tick()
      const before = (await events(user.userId)).length
      t.replay!.accounts.fund(ACCOUNT.apiKey, 'USDT', '-9000')
      await Promise.all([watcher.tick(), second.tick()])
      assert.equal((await events(user.userId)).length, before + 1)
    })
  })
}
