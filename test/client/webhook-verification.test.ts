import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { verifyWebhook, WebhookVerificationError } from '../../src/client/index.js'
import { backends } from '../support/database.js'
import { type HttpsReceiver, startHttpsReceiver, testCertificates } from '../support/https-receiver.js'
import { type ClientServer, startClientServer } from './server.js'

const env = () => ({ WEBHOOK_ALLOW_PRIVATE_HOSTS: 'true', WEBHOOK_CA_FILE: testCertificates().caFile })

for (const backend of backends()) {
  describe(`the client verifies real webhook deliveries (${backend})`, () => {
    let server: ClientServer
    let receiver: HttpsReceiver
    before(async () => {
      receiver = await startHttpsReceiver()
      server = await startClientServer(backend, env(), { queue: 'workers', config: { webhookTimeoutMs: 2000 } })
    })
    after(async () => {
      await server.close()
      await receiver.close()
    })

    it('accepts a delivery signed with the secret create returned, and refuses a tampered body, another secret and an old delivery', async () => {
      const client = server.client(await server.t.createKey(['webhooks:read', 'webhooks:write']))
      const webhook = await client.webhooks.create({ url: receiver.url, events: ['strategy.*'], description: 'client test' })
      const result = await client.webhooks.test(webhook.id)
      assert.equal(result.delivered, true, result.error ?? '')
      const [delivery] = await receiver.waitFor(1)
      const headers = delivery!.headers as Record<string, string>

      const event = await verifyWebhook(webhook.secret, headers, delivery!.body)
      assert.equal(event.type, 'webhook.test')
      assert.equal(event.id, headers['webhook-id'])
      assert.equal(event.id, result.test_event_id)
      // The same check through fetch's Headers and on the raw bytes.
      await verifyWebhook(webhook.secret, new Headers(headers), new TextEncoder().encode(delivery!.body))

      const tampered = delivery!.body.replace('"webhook.test"', '"strategy.deployed"')
      assert.notEqual(tampered, delivery!.body)
      await assert.rejects(verifyWebhook(webhook.secret, headers, tampered), WebhookVerificationError)
      const other = await client.webhooks.create({ url: `${receiver.url}?other`, events: ['*'] })
      await assert.rejects(verifyWebhook(other.secret, headers, delivery!.body), /no v1 signature matches/)
      const later = Number(headers['webhook-timestamp']) * 1000 + 301_000
      await assert.rejects(verifyWebhook(webhook.secret, headers, delivery!.body, { now: () => later }), /tolerance 300 s/)
      await assert.rejects(verifyWebhook(webhook.secret, { ...headers, 'webhook-signature': '' }, delivery!.body), /missing/)
    })
  })
}
