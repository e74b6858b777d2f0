import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { pino } from 'pino'
import { BalanceWatcher } from '../../../src/live/balance-watch/balance-watcher.js'
import { type SignedInUser, signIn } from '../../auth/bearer.js'
import { startTestApp, type TestApp } from '../../support/app.js'
import { backends } from '../../support/database.js'
import { type HttpsReceiver, startHttpsReceiver, testCertificates, verifyStandardWebhook } from '../../support/https-receiver.js'
import { poll } from '../../support/poll.js'
import { account } from '../live-accounts.js'

const WATCHED = account('LOWBAL')

for (const backend of backends()) {
  describe(`account.balance_low at a real HTTPS receiver (${backend})`, () => {
    let t: TestApp
    let user: SignedInUser
    let receiver: HttpsReceiver
    let watcher: BalanceWatcher
    let secret: string
    const call = (method: 'POST', url: string, payload: object) => {
      t.clock.value = Date.now()
      return t.app.inject({ method, url, headers: user.headers, payload })
    }
    const delivered = () =>
      receiver.received.filter((r) => r.path.endsWith('/balance')).map((r) => ({ request: r, event: JSON.parse(r.body) as { type: string; data: Record<string, string> } }))

    before(async () => {
      receiver = await startHttpsReceiver()
      t = await startTestApp(
        backend,
        { WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: testCertificates().caFile, RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000' },
        { replay: { accounts: [{ ...WATCHED, balances: { USDT: '3000' } }] }, queue: 'workers', config: { webhookTimeoutMs: 1000 } },
      )
      user = await signIn(t)
      const key = await call('POST', '/v1/exchange-keys', { api_key: WATCHED.apiKey, api_secret: WATCHED.secretKey })
      assert.equal(key.statusCode, 200, key.body)
      const hook = await call('POST', '/v1/webhooks', { url: `${receiver.url}/balance`, events: ['account.balance_low'], balance_low_threshold: '1000' })
      assert.equal(hook.statusCode, 200, hook.body)
      secret = hook.json().secret as string
      // Signs with the clock it is given: the wall clock here (the test clock stands still between requests).
      watcher = new BalanceWatcher({ db: t.database.handle.db, secrets: t.services.secrets, upstream: t.services.market.client, log: pino({ level: 'silent' }), now: () => Date.now() })
    })
    after(async () => {
      await watcher.stop()
      await t.close()
      await receiver.close()
    })

    it('arrives signed, once per fall, and again after the balance recovered and fell', async () => {
      await watcher.tick()
      t.replay!.accounts.fund(WATCHED.apiKey, 'USDT', '-2500')
      await watcher.tick()
      await watcher.tick()
      const first = await poll('the first delivery', 15_000, () => (delivered().length >= 1 ? delivered() : undefined))
      assert.equal(first[0]!.event.type, 'account.balance_low')
      assert.equal(first[0]!.event.data.asset, 'USDT')
      assert.equal(Number(first[0]!.event.data.available), 500)
      assert.equal(first[0]!.event.data.threshold, '1000')
      assert.equal(verifyStandardWebhook(secret, first[0]!.request.headers, first[0]!.request.body), true, 'signed with the webhook secret')

      t.replay!.accounts.fund(WATCHED.apiKey, 'USDT', '2500')
      await watcher.tick()
      t.replay!.accounts.fund(WATCHED.apiKey, 'USDT', '-2800')
      await watcher.tick()
      await watcher.tick()
      const both = await poll('the second delivery', 15_000, () => (delivered().length >= 2 ? delivered() : undefined))
      assert.equal(Number(both[1]!.event.data.available), 200)
      assert.equal(verifyStandardWebhook(secret, both[1]!.request.headers, both[1]!.request.body), true)
      // Every event the outbox holds went out once: two falls, two deliveries, none for the ticks between.
      const stored = await t.database.handle.db.selectFrom('events').select('id').where('type', '=', 'account.balance_low').execute()
      assert.equal(stored.length, 2)
      await poll('the outbox drained', 15_000, async () => {
        const rows = await t.database.handle.db.selectFrom('deliveries').select('state').where('event_type', '=', 'account.balance_low').execute()
        return rows.length === 2 && rows.every((r) => r.state === 'delivered') ? true : undefined
      })
      assert.equal(delivered().length, 2, 'one delivery per fall')
      assert.equal(new Set(delivered().map((d) => d.request.headers['webhook-id'])).size, 2)
    })
  })
}
