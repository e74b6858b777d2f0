import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { recordEvent } from '../../src/events/outbox.js'
import { RETRY_DELAYS_MS, RETRY_JITTER } from '../../src/webhooks/pipeline.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends, openTestDatabase } from '../support/database.js'
import { type HttpsReceiver, type ReceivedRequest, startHttpsReceiver, testCertificates, verifyStandardWebhook } from '../support/https-receiver.js'
import { poll } from '../support/poll.js'
import type { KeyPair } from '../support/signing.js'

const RW = ['webhooks:read', 'webhooks:write'] as const

/** Loopback receivers are allowed (tests only) and trusted through the test CA; attempts give up after 1 s. */
const env = () => ({ WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: testCertificates().caFile, RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000' })
const config = { webhookTimeoutMs: 1000 }

interface Created {
  id: string
  url: string
  secret: string
}

for (const backend of backends()) {
  describe(`webhook deliveries (${backend})`, () => {
    let t: TestApp
    let key: KeyPair
    let userId: number
    let receiver: HttpsReceiver
    before(async () => {
      receiver = await startHttpsReceiver()
      t = await startTestApp(backend, env(), { queue: 'workers', config })
      key = await t.createKey([...RW])
      userId = (await t.database.handle.db.selectFrom('api_keys').select('user_id').where('id', '=', key.api_key).executeTakeFirstOrThrow()).user_id
    })
    after(async () => {
      await t.close()
      await receiver.close()
    })

    let paths = 0
    /** A webhook on its own path of a receiver, so each test counts only its own requests. */
    async function subscribe(events: string[], on: HttpsReceiver = receiver, as = key): Promise<Created> {
      const res = await t.signed(as, 'POST', '/v1/webhooks', { url: `${on.url}/${++paths}`, events })
      assert.equal(res.statusCode, 200, res.body)
      return res.json()
    }
    const requestsTo = (hook: Created, on: HttpsReceiver = receiver) => on.received.filter((r) => hook.url.endsWith(r.path))
    const waitForRequests = (hook: Created, count: number, on: HttpsReceiver = receiver) =>
      poll(`${count} requests to ${hook.url}`, 10_000, () => (requestsTo(hook, on).length >= count ? requestsTo(hook, on) : undefined))
    const test = async (hook: Created, body: unknown = {}) => {
      const res = await t.signed(key, 'POST', `/v1/webhooks/${hook.id}/test`, body)
      assert.equal(res.statusCode, 200, res.body)
      return res.json()
    }
    const webhook = async (hook: Created) => (await t.signed(key, 'GET', `/v1/webhooks/${hook.id}`)).json()
    const answerFor = (hook: Created, answer: (r: ReceivedRequest) => { status: number; delayMs?: number; headers?: Record<string, string> }) => {
      const previous = receiver.answer
      receiver.answer = (request) => (hook.url.endsWith(request.path) ? answer(request) : previous(request))
    }
    const delivery = (eventId: string, hook: Created) =>
      t.database.handle.db.selectFrom('deliveries').selectAll().where('event_id', '=', eventId).where('webhook_id', '=', hook.id).executeTakeFirstOrThrow()
    const emit = (type: string, data: Record<string, unknown>) =>
      t.database.handle.db.transaction().execute((trx) => recordEvent(trx, { userId, type, data, at: new Date(t.clock.now()) }))

    it('sends a test delivery that the receiver verifies with the Standard Webhooks algorithm', async () => {
      const hook = await subscribe(['backtest.job_done'])
      const result = await test(hook)
      assert.match(result.test_event_id, /^evt_test_[0-9a-f]{12}$/)
      assert.equal(result.delivered, true, result.error)
      assert.equal(result.response_status, 204)
      assert.ok(Number.isInteger(result.response_time_ms) && result.response_time_ms >= 0)
      assert.equal(result.error, null)

      const [got] = requestsTo(hook)
      assert.ok(got)
      assert.equal(verifyStandardWebhook(hook.secret, got.headers, got.body, 300, t.clock.now()), true, 'signature verifies with the secret')
      assert.equal(verifyStandardWebhook(hook.secret, got.headers, got.body.replace('webhook.test', 'webhook.tesT'), 300, t.clock.now()), false)
      assert.equal(got.headers['webhook-id'], result.test_event_id)
      assert.equal(got.headers['content-type'], 'application/json')
      assert.match(String(got.headers['user-agent']), /Perpetua/)
      const body = JSON.parse(got.body)
      assert.deepEqual(Object.keys(body), ['id', 'type', 'timestamp', 'data'])
      assert.deepEqual([body.id, body.type, body.data.webhook_id], [result.test_event_id, 'webhook.test', hook.id])
      assert.match(body.timestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)

      const after = await webhook(hook)
      assert.equal(Number(got.headers['webhook-timestamp']), Math.floor(Date.parse(after.last_delivery_at) / 1000))
      assert.equal(after.last_success_at, after.last_delivery_at)
      assert.equal(after.consecutive_failures, 0)

      const log = (await t.signed(key, 'GET', `/v1/webhooks/${hook.id}/deliveries`)).json()
      assert.equal(log.data.length, 1)
      assert.deepEqual(
        { ...log.data[0], response_time_ms: typeof log.data[0].response_time_ms },
        {
          event_id: result.test_event_id,
          event_type: 'webhook.test',
          attempt: 1,
          attempted_at: after.last_delivery_at,
          delivered: true,
          response_status: 204,
          response_time_ms: 'number',
          error: null,
          delivery_state: 'delivered',
          next_attempt_at: null,
        },
      )
    })

    it('sends a real event type with dummy data, and refuses unknown types and wildcards', async () => {
      const hook = await subscribe(['*'])
      const result = await test(hook, { event_type: 'backtest.job_done' })
      assert.equal(result.delivered, true)
      const body = JSON.parse(requestsTo(hook)[0]!.body)
      assert.equal(body.type, 'backtest.job_done')
      assert.match(body.data.job_id, /^bt_/)
      for (const eventType of ['backtest.*', 'strategy.exploded', '*']) {
        const res = await t.signed(key, 'POST', `/v1/webhooks/${hook.id}/test`, { event_type: eventType })
        assert.equal(res.statusCode, 400, res.body)
        assert.equal(res.json().error.field, 'event_type')
      }
      assert.equal(requestsTo(hook).length, 1, 'refused tests sent nothing')
    })

    it('counts a 500, a time-out, a redirect and an untrusted certificate as failures; a success resets the count', async () => {
      const hook = await subscribe(['*'])
      answerFor(hook, () => ({ status: 500 }))
      const failed = await test(hook)
      assert.deepEqual([failed.delivered, failed.response_status, failed.error], [false, 500, 'the receiver answered HTTP 500'])
      assert.equal((await webhook(hook)).consecutive_failures, 1)

      answerFor(hook, () => ({ status: 200, delayMs: 3000 }))
      const slow = await test(hook)
      assert.deepEqual([slow.delivered, slow.response_status, slow.response_time_ms], [false, null, null])
      assert.match(slow.error, /no answer within/)
      assert.equal((await webhook(hook)).consecutive_failures, 2)

      answerFor(hook, () => ({ status: 302, headers: { location: 'https://127.0.0.1:1/elsewhere' } }))
      const redirected = await test(hook)
      assert.deepEqual([redirected.delivered, redirected.response_status], [false, 302])
      assert.equal((await webhook(hook)).consecutive_failures, 3)

      const untrusted = await startHttpsReceiver({ untrusted: true })
      try {
        const tls = await subscribe(['*'], untrusted)
        const refused = await test(tls)
        assert.deepEqual([refused.delivered, refused.response_status], [false, null])
        assert.match(refused.error, /certificate/)
        assert.equal(requestsTo(tls, untrusted).length, 0, 'nothing was sent over an unverified connection')
        assert.equal((await webhook(tls)).consecutive_failures, 1)
      } finally {
        await untrusted.close()
      }

      answerFor(hook, () => ({ status: 200 }))
      assert.equal((await test(hook)).delivered, true)
      const recovered = await webhook(hook)
      assert.equal(recovered.consecutive_failures, 0)
      assert.equal(recovered.last_success_at, recovered.last_delivery_at)
      const log = (await t.signed(key, 'GET', `/v1/webhooks/${hook.id}/deliveries?limit=2`)).json()
      assert.deepEqual(log.data.map((a: { delivered: boolean }) => a.delivered), [true, false])
      assert.ok(log.next_cursor)
      const rest = (await t.signed(key, 'GET', `/v1/webhooks/${hook.id}/deliveries?cursor=${log.next_cursor}`)).json()
      assert.deepEqual(rest.data.map((a: { response_status: number | null }) => a.response_status), [null, 500])
      assert.equal(rest.next_cursor, null)
      const forged = Buffer.from(JSON.stringify(['2026-01-01T00:00:00.000Z', 'not-digits'])).toString('base64url')
      const refused = await t.signed(key, 'GET', `/v1/webhooks/${hook.id}/deliveries?cursor=${forged}`)
      assert.equal(refused.statusCode, 400, refused.body)
      assert.equal(refused.json().error.field, 'cursor')
    })

    it('pauses after 10 consecutive failures, breaks after 50; a broken webhook refuses tests until reactivated', async () => {
      const hook = await subscribe(['*'])
      answerFor(hook, () => ({ status: 503 }))
      for (let i = 1; i <= 9; i++) await test(hook)
      assert.deepEqual([(await webhook(hook)).status, (await webhook(hook)).consecutive_failures], ['active', 9])
      await test(hook)
      assert.deepEqual([(await webhook(hook)).status, (await webhook(hook)).consecutive_failures], ['paused', 10])
      for (let i = 11; i <= 49; i++) await test(hook) // a paused webhook can still be tested
      assert.equal((await webhook(hook)).status, 'paused')
      await test(hook)
      const broken = await webhook(hook)
      assert.deepEqual([broken.status, broken.consecutive_failures], ['broken', 50])

      const sent = requestsTo(hook).length
      const refused = await t.signed(key, 'POST', `/v1/webhooks/${hook.id}/test`, {})
      assert.equal(refused.statusCode, 409, refused.body)
      assert.equal(refused.json().error.code, 'INVALID_STATE')
      assert.equal(requestsTo(hook).length, sent, 'a broken webhook is not contacted')
      const listed = (await t.signed(key, 'GET', '/v1/webhooks?status=broken')).json().data.map((w: { id: string }) => w.id)
      assert.deepEqual(listed, [hook.id])

      answerFor(hook, () => ({ status: 204 }))
      const reactivated = await t.signed(key, 'PATCH', `/v1/webhooks/${hook.id}`, { status: 'active' })
      assert.deepEqual([reactivated.json().status, reactivated.json().consecutive_failures], ['active', 0])
      assert.equal((await test(hook)).delivered, true)
    })

    it('pauses a webhook whose receiver answers 410 Gone', async () => {
      const hook = await subscribe(['*'])
      answerFor(hook, () => ({ status: 410 }))
      const result = await test(hook)
      assert.deepEqual([result.delivered, result.response_status], [false, 410])
      assert.deepEqual([(await webhook(hook)).status, (await webhook(hook)).consecutive_failures], ['paused', 1])
    })

    it('retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 24 h (with jitter), with the same id and body, then gives up', async () => {
      const hook = await subscribe(['*'])
      answerFor(hook, () => ({ status: 500 }))
      const { test_event_id: eventId } = await test(hook)
      const first = requestsTo(hook)[0]!
      for (const [i, wait] of RETRY_DELAYS_MS.entries()) {
        const row = await delivery(eventId, hook)
        assert.deepEqual([row.state, row.attempts], ['pending', i + 1])
        const delay = row.next_attempt_at!.getTime() - t.clock.now()
        assert.ok(delay >= wait * (1 - RETRY_JITTER) - 5 && delay <= wait * (1 + RETRY_JITTER), `retry ${i + 1} after ${delay} ms, schedule ${wait}`)
        // Not due yet: a sweep sends nothing.
        t.clock.advance(Math.floor(delay / 2))
        await t.services.webhooks.runDue()
        assert.equal(requestsTo(hook).length, i + 1)
        t.clock.advance(delay)
        await t.services.webhooks.runDue()
        const got = await waitForRequests(hook, i + 2)
        const retry = got[i + 1]!
        assert.equal(retry.headers['webhook-id'], eventId)
        assert.equal(retry.body, first.body)
        assert.equal(verifyStandardWebhook(hook.secret, retry.headers, retry.body, 300, t.clock.now()), true)
        await poll('the attempt to be recorded', 10_000, async () => ((await delivery(eventId, hook)).attempts === i + 2 ? true : undefined))
      }
      const done = await delivery(eventId, hook)
      assert.deepEqual([done.state, done.attempts, done.next_attempt_at], ['failed', 8, null])
      t.clock.advance(48 * 3_600_000)
      await t.services.webhooks.runDue()
      assert.equal(requestsTo(hook).length, 8, 'no attempt after the schedule ends')
      assert.deepEqual([(await webhook(hook)).consecutive_failures, (await webhook(hook)).status], [8, 'active'])
    })

    it('fans an event out to every webhook whose subscription matches, as soon as it commits', async () => {
      const exact = await subscribe(['backtest.job_done'])
      const group = await subscribe(['backtest.*'])
      const all = await subscribe(['*'])
      const other = await subscribe(['strategy.*', 'account.api_key_rotated'])
      const stranger = await subscribe(['*'], receiver, await t.createKey([...RW]))
      // No runDue here: the commit's notification wakes the dispatcher.
      const eventId = await emit('backtest.job_done', { job_id: 'bt_12345678', status: 'done' })
      for (const hook of [exact, group, all]) {
        const [got] = await waitForRequests(hook, 1)
        assert.equal(got!.headers['webhook-id'], eventId)
        assert.equal(verifyStandardWebhook(hook.secret, got!.headers, got!.body, 300, t.clock.now()), true)
        assert.deepEqual(JSON.parse(got!.body).data, { job_id: 'bt_12345678', status: 'done' })
      }
      await t.services.webhooks.runDue()
      assert.equal(requestsTo(other).length, 0)
      assert.equal(requestsTo(stranger).length, 0, "another user's webhook never sees the event")
      await poll('deliveries settled', 10_000, async () => {
        const rows = await t.database.handle.db
          .selectFrom('deliveries')
          .select('state')
          .where('event_id', '=', eventId)
          .where('webhook_id', 'in', [exact.id, group.id, all.id])
          .execute()
        return rows.length === 3 && rows.every((r) => r.state === 'delivered') ? true : undefined
      })
    })

    it('delivers account.balance_low only to subscriptions with a threshold above the balance', async () => {
      const high = (await t.signed(key, 'POST', '/v1/webhooks', { url: `${receiver.url}/${++paths}`, events: ['account.balance_low'], balance_low_threshold: '100' })).json()
      const low = (await t.signed(key, 'POST', '/v1/webhooks', { url: `${receiver.url}/${++paths}`, events: ['account.*'], balance_low_threshold: '10' })).json()
      const none = await subscribe(['account.*'])
      await emit('account.balance_low', { asset: 'USDT', available: '50' })
      await waitForRequests(high, 1)
      await t.services.webhooks.runDue()
      assert.equal(requestsTo(low).length, 0)
      assert.equal(requestsTo(none).length, 0)
    })

    it('holds deliveries while a webhook is paused and sends them, in order, once it is active again', async () => {
      const hook = await subscribe(['strategy.*'])
      assert.equal((await t.signed(key, 'PATCH', `/v1/webhooks/${hook.id}`, { status: 'paused' })).statusCode, 200)
      // One transaction, one timestamp: the order they were written in decides.
      const at = new Date(t.clock.now())
      const [first, second] = await t.database.handle.db.transaction().execute(async (trx) => [
        await recordEvent(trx, { userId, type: 'strategy.deployed', data: { strategy_id: 'strat_00000001' }, at }),
        await recordEvent(trx, { userId, type: 'strategy.error', data: { strategy_id: 'strat_00000001' }, at }),
      ])
      await t.services.webhooks.runDue()
      t.clock.advance(60_000)
      await t.services.webhooks.runDue()
      assert.equal(requestsTo(hook).length, 0)
      assert.equal((await delivery(first!, hook)).state, 'pending')
      assert.equal((await t.signed(key, 'PATCH', `/v1/webhooks/${hook.id}`, { status: 'active' })).statusCode, 200)
      const got = await waitForRequests(hook, 2)
      assert.deepEqual(got.map((r) => r.headers['webhook-id']), [first, second])
    })
  })

  describe(`backtest.job_done reaches a subscribed receiver (${backend})`, () => {
    it('delivers the event of a finished backtest end to end', async () => {
      const receiver = await startHttpsReceiver()
      const t = await startTestApp(backend, env(), { queue: 'workers', replay: true, config })
      try {
        const key = await t.createKey([...RW, 'backtests:write'])
        const hook = (await t.signed(key, 'POST', '/v1/webhooks', { url: receiver.url, events: ['backtest.*'] })).json()
        const job = await t.signed(key, 'POST', '/v1/backtest/jobs', {
          template_id: 'sma_cross',
          params: { fast: 10, slow: 30 },
          symbols: ['BTCUSDT'],
          timeframe: '1d',
          start: '2023-01-01T00:00:00Z',
          end: '2023-03-31T00:00:00Z',
          capital: '10000',
        })
        assert.equal(job.statusCode, 200, job.body)
        const [got] = await receiver.waitFor(1, 60_000)
        assert.equal(verifyStandardWebhook(hook.secret, got!.headers, got!.body, 300, t.clock.now()), true)
        const body = JSON.parse(got!.body)
        assert.equal(body.type, 'backtest.job_done')
        assert.equal(body.data.job_id, job.json().id)
        assert.equal(body.data.status, 'done')
        assert.deepEqual(body.data.warnings, [], 'a complete range: the payload carries its empty warnings list')
        assert.match(body.id, /^evt_[0-9a-f]{12}$/)
      } finally {
        await t.close()
        await receiver.close()
      }
    })
  })

  describe(`a pending delivery survives a restart (${backend})`, () => {
    it('is delivered by the next process over the same database', async () => {
      const receiver = await startHttpsReceiver()
      const database = await openTestDatabase(backend)
      try {
        // First process: the API and the queue, but no delivery workers: the event stays pending.
        const first = await startTestApp(backend, env(), { queue: 'queue', database, config })
        const key = await first.createKey([...RW])
        const created = await first.signed(key, 'POST', '/v1/webhooks', { url: receiver.url, events: ['account.*'] })
        assert.equal(created.statusCode, 200, created.body)
        const { secret } = created.json()
        const userId = (await database.handle.db.selectFrom('api_keys').select('user_id').where('id', '=', key.api_key).executeTakeFirstOrThrow()).user_id
        const eventId = await database.handle.db
          .transaction()
          .execute((trx) => recordEvent(trx, { userId, type: 'account.api_key_rotated', data: { api_key: key.api_key }, at: new Date() }))
        await first.close()
        assert.equal(receiver.received.length, 0)

        const second = await startTestApp(backend, env(), { queue: 'workers', database, config })
        try {
          const [got] = await receiver.waitFor(1)
          assert.equal(got!.headers['webhook-id'], eventId)
          assert.equal(verifyStandardWebhook(secret, got!.headers, got!.body, 300, second.clock.now()), true)
        } finally {
          await second.close()
        }
      } finally {
        await database.close()
        await receiver.close()
      }
    })
  })
}
