import assert from 'node:assert/strict'
import net from 'node:net'
import { after, before, describe, it } from 'node:test'
import { WebhookTransport } from '../../src/webhooks/transport.js'
import { newWebhookSecret, signatureHeaders } from '../../src/webhooks/signing.js'
import { type HttpsReceiver, startHttpsReceiver, testCertificates, verifyStandardWebhook } from '../support/https-receiver.js'

const BODY = JSON.stringify({ id: 'evt_0123456789ab', type: 'webhook.test', timestamp: '2026-01-01T00:00:00.000Z', data: {} })

describe('webhook transport', () => {
  let receiver: HttpsReceiver
  let untrusted: HttpsReceiver
  let transport: WebhookTransport
  before(async () => {
    receiver = await startHttpsReceiver()
    untrusted = await startHttpsReceiver({ untrusted: true })
    transport = new WebhookTransport({ allowPrivateHosts: true, ca: [testCertificates().ca], timeoutMs: 1_000 })
  })
  after(async () => {
    await transport.close()
    await receiver.close()
    await untrusted.close()
  })

  it('delivers a signed body that the receiver verifies as a Standard Webhook', async () => {
    const secret = newWebhookSecret()
    assert.match(secret, /^[A-Za-z0-9_-]{40}$/)
    const headers = { 'content-type': 'application/json', ...signatureHeaders(secret, 'evt_0123456789ab', Math.floor(Date.now() / 1000), BODY) }
    receiver.answer = () => ({ status: 204 })
    const before = receiver.received.length
    const result = await transport.post(receiver.url, headers, BODY)
    assert.equal(result.delivered, true, result.error ?? '')
    assert.equal(result.status, 204)
    assert.equal(result.error, null)
    assert.ok(typeof result.timeMs === 'number' && result.timeMs >= 0)
    const got = receiver.received[before]!
    assert.equal(got.body, BODY)
    assert.equal(got.headers['webhook-id'], 'evt_0123456789ab')
    assert.equal(verifyStandardWebhook(secret, got.headers, got.body), true)
    assert.equal(verifyStandardWebhook(newWebhookSecret(), got.headers, got.body), false, 'another secret must not verify')
    assert.equal(verifyStandardWebhook(secret, got.headers, `${got.body} `), false, 'a changed body must not verify')
  })

  it('counts a 500 as a failure with the status', async () => {
    receiver.answer = () => ({ status: 500 })
    const result = await transport.post(receiver.url, {}, BODY)
    assert.deepEqual({ ...result, timeMs: typeof result.timeMs }, { delivered: false, status: 500, timeMs: 'number', error: 'the receiver answered HTTP 500' })
  })

  it('does not follow a redirect, and counts it as a failure', async () => {
    receiver.answer = (request) => (request.path === '/hook' ? { status: 302, headers: { location: '/elsewhere' } } : { status: 204 })
    const before = receiver.received.length
    const result = await transport.post(receiver.url, {}, BODY)
    assert.equal(result.delivered, false)
    assert.equal(result.status, 302)
    assert.match(result.error ?? '', /redirect/)
    assert.equal(receiver.received.length, before + 1, 'the Location was never requested')
  })

  it('gives up on a receiver that does not answer in time', async () => {
    receiver.answer = () => ({ status: 204, delayMs: 5_000 })
    const result = await transport.post(receiver.url, {}, BODY)
    assert.deepEqual(result, { delivered: false, status: null, timeMs: null, error: 'no answer within 1 s' })
  })

  it('refuses a certificate no trusted CA signed', async () => {
    const result = await transport.post(untrusted.url, {}, BODY)
    assert.equal(result.delivered, false)
    assert.equal(result.status, null)
    assert.match(result.error ?? '', /TLS certificate was not accepted/)
    assert.equal(untrusted.received.length, 0)
  })

  it('trusts the test CA only because it was given: without it the same receiver fails', async () => {
    const plain = new WebhookTransport({ allowPrivateHosts: true, timeoutMs: 1_000 })
    try {
      receiver.answer = () => ({ status: 204 })
      const result = await plain.post(receiver.url, {}, BODY)
      assert.match(result.error ?? '', /TLS certificate was not accepted/)
    } finally {
      await plain.close()
    }
  })

  it('reports a refused connection', async () => {
    const port = await freePort()
    const result = await transport.post(`https://127.0.0.1:${port}/hook`, {}, BODY)
    assert.deepEqual(result, { delivered: false, status: null, timeMs: null, error: 'the receiver refused the connection' })
  })

  describe('without WEBHOOK_ALLOW_PRIVATE_HOSTS', () => {
    let strict: WebhookTransport
    before(() => {
      strict = new WebhookTransport({ allowPrivateHosts: false, ca: [testCertificates().ca], timeoutMs: 1_000 })
    })
    after(() => strict.close())

    for (const host of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::1]']) {
      it(`never connects to the address literal ${host}`, async () => {
        const before = receiver.received.length
        const port = new URL(receiver.url).port
        const result = await strict.post(`https://${host}:${port}/hook`, {}, BODY)
        assert.equal(result.delivered, false)
        assert.match(result.error ?? '', /refused to connect .*loopback/)
        assert.equal(receiver.received.length, before)
      })
    }

    it('vets the resolved address at connect time: a name that resolves to loopback is refused', async () => {
      const before = receiver.received.length
      const result = await strict.post(`https://localhost:${new URL(receiver.url).port}/hook`, {}, BODY)
      assert.equal(result.delivered, false)
      assert.match(result.error ?? '', /refused to connect to localhost \(.*\): a loopback address/)
      assert.equal(receiver.received.length, before)
    })
  })
})

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = net.createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })
}
