import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { Webhook as StandardWebhook } from 'standardwebhooks'
import { Webhook as SvixWebhook } from 'svix'
import { newWebhookSecret } from '../../src/webhooks/signing.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { type HttpsReceiver, type ReceivedRequest, startHttpsReceiver, testCertificates } from '../support/https-receiver.js'

/**
 * Webhook secrets used exactly as create returns them with the Standard Webhooks libraries that
 * receivers install (issue 12): both decode the secret as standard base64 and threw on `-` or `_`.
 */

const env = () => ({ WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: testCertificates().caFile, RATE_LIMIT_WEIGHT_PER_MINUTE: '1000000' })
const USERS = 8
/** The account limit: 8 × 25 = 200 webhooks, 200 secrets. */
const HOOKS_PER_USER = 25

type Headers = Record<string, string>

function headersOf(request: ReceivedRequest): Headers {
  const out: Headers = {}
  for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) out[name] = String((request.headers as IncomingHttpHeaders)[name])
  return out
}

/** Verifies with both libraries; throws what the library throws. */
function verifyWithBoth(secret: string, request: ReceivedRequest): void {
  new StandardWebhook(secret).verify(request.body, headersOf(request))
  new SvixWebhook(secret).verify(request.body, headersOf(request))
}

describe('newWebhookSecret', () => {
  it('gives 40 letters and digits that read as the same 30 bytes in base64 and base64url, and that both libraries take', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 5000; i++) {
      const secret = newWebhookSecret()
      assert.match(secret, /^[A-Za-z0-9]{40}$/)
      const key = Buffer.from(secret, 'base64url')
      assert.equal(key.length, 30)
      assert.deepEqual(Buffer.from(secret, 'base64'), key)
      assert.doesNotThrow(() => new StandardWebhook(secret))
      assert.doesNotThrow(() => new SvixWebhook(secret))
      seen.add(secret)
    }
    assert.equal(seen.size, 5000)
  })
})

for (const backend of backends()) {
  describe(`webhook deliveries verified by standardwebhooks and svix (${backend})`, () => {
    let t: TestApp
    let receiver: HttpsReceiver
    before(async () => {
      receiver = await startHttpsReceiver()
      t = await startTestApp(backend, env(), { queue: 'workers', config: { webhookTimeoutMs: 2000 } })
    })
    after(async () => {
      await t.close()
      await receiver.close()
    })

    let paths = 0
    const requestTo = (url: string) => receiver.received.find((request) => url.endsWith(request.path))

    it(`every one of ${USERS * HOOKS_PER_USER} secrets, exactly as created, verifies a real delivery with both libraries`, async (context) => {
      const created = (
        await Promise.all(
          Array.from({ length: USERS }, async () => {
            const key = await t.createKey(['webhooks:read', 'webhooks:write'])
            const hooks: { id: string; url: string; secret: string }[] = []
            for (let i = 0; i < HOOKS_PER_USER; i++) {
              const res = await t.signed(key, 'POST', '/v1/webhooks', { url: `${receiver.url}/std/${++paths}`, events: ['backtest.job_done'] })
              assert.equal(res.statusCode, 200, res.body)
              const hook = res.json()
              const test = await t.signed(key, 'POST', `/v1/webhooks/${hook.id}/test`, {})
              assert.equal(test.json().delivered, true, test.body)
              hooks.push(hook)
            }
            return hooks
          }),
        )
      ).flat()

      const verified = { standardwebhooks: 0, svix: 0 }
      for (const hook of created) {
        const request = requestTo(hook.url)
        assert.ok(request, `a delivery reached ${hook.url}`)
        new StandardWebhook(hook.secret).verify(request.body, headersOf(request))
        verified.standardwebhooks++
        new SvixWebhook(hook.secret).verify(request.body, headersOf(request))
        verified.svix++
      }
      assert.deepEqual(verified, { standardwebhooks: created.length, svix: created.length })
      assert.equal(created.length, USERS * HOOKS_PER_USER)
      // Drawn from the full alphabet, about 7 in 10 of these would have made `new Webhook(secret)` throw.
      context.diagnostic(`secrets verified: standardwebhooks ${verified.standardwebhooks}/${created.length}, svix ${verified.svix}/${created.length}`)
    })

    it('the libraries still refuse a tampered body, another secret and a stale timestamp', async () => {
      const key = await t.createKey(['webhooks:read', 'webhooks:write'])
      const hook = (await t.signed(key, 'POST', '/v1/webhooks', { url: `${receiver.url}/std/${++paths}`, events: ['backtest.job_done'] })).json()
      assert.equal((await t.signed(key, 'POST', `/v1/webhooks/${hook.id}/test`, {})).json().delivered, true)
      const request = requestTo(hook.url)!
      verifyWithBoth(hook.secret, request)
      assert.throws(() => verifyWithBoth(hook.secret, { ...request, body: request.body.replace('webhook.test', 'webhook.tesT') }), /signature/i)
      assert.throws(() => verifyWithBoth(newWebhookSecret(), request), /signature/i)
      const stale = { ...request, headers: { ...request.headers, 'webhook-timestamp': String(Number(request.headers['webhook-timestamp']) - 600) } }
      assert.throws(() => verifyWithBoth(hook.secret, stale), /timestamp/i)
    })

    it('a secret issued before the rule (with - and _) keeps its key; its standard-base64 spelling verifies with both libraries', async () => {
      const key = await t.createKey(['webhooks:read', 'webhooks:write'])
      const hook = (await t.signed(key, 'POST', '/v1/webhooks', { url: `${receiver.url}/std/${++paths}`, events: ['backtest.job_done'] })).json()
      let legacy: string
      do legacy = crypto.randomBytes(30).toString('base64url')
      while (!legacy.includes('-') || !legacy.includes('_'))
      await t.database.handle.db.updateTable('webhooks').set({ secret_enc: t.services.secrets.seal(legacy) }).where('id', '=', hook.id).execute()
      assert.equal((await t.signed(key, 'POST', `/v1/webhooks/${hook.id}/test`, {})).json().delivered, true)
      const request = requestTo(hook.url)!
      assert.throws(() => new StandardWebhook(legacy), /incorrect characters/)
      verifyWithBoth(legacy.replaceAll('-', '+').replaceAll('_', '/'), request)
    })
  })
}
