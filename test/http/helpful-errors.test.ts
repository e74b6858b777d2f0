import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import net from 'node:net'
import { after, before, describe, it } from 'node:test'
import { signRequest } from '../../src/auth/request-signature.js'
import { vetWebhookUrl } from '../../src/webhooks/url-policy.js'
import { startTestApp, type TestApp } from '../support/app.js'
import { backends } from '../support/database.js'
import { signedHeaders } from '../support/signing.js'

const strategy = { name: 'trend', template_id: 'sma_cross', params: { fast: 10 }, symbols: ['BTCUSDT'], timeframe: '1h', capital: '1000' }

/** One raw HTTP/1.1 exchange over TCP: what a client whose request line Node's parser refuses receives. */
async function raw(port: number, request: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  const socket = net.connect(port, '127.0.0.1')
  const chunks: Buffer[] = []
  socket.on('data', (chunk) => chunks.push(chunk))
  await new Promise<void>((resolve, reject) => {
    socket.on('error', reject)
    socket.on('close', () => resolve())
    socket.write(request)
  })
  const text = Buffer.concat(chunks).toString('utf8')
  const [head = '', body = ''] = text.split('\r\n\r\n')
  const [statusLine = '', ...lines] = head.split('\r\n')
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
  return { status: Number(statusLine.split(' ')[1]), headers, body }
}

for (const backend of backends()) {
  describe(`errors that say what to fix (${backend})`, () => {
    let t: TestApp
    let port: number
    before(async () => {
      t = await startTestApp(backend)
      await t.app.listen({ host: '127.0.0.1', port: 0 })
      port = (t.app.server.address() as net.AddressInfo).port
    })
    after(() => t.close())

    it('names a timestamp in seconds (or microseconds) as such, with the milliseconds to send', async () => {
      const key = await t.createKey(['strategies:read'])
      const now = t.clock.now()
      const seconds = Math.floor(now / 1000)
      const res = await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: signedHeaders(key, 'GET', '/v1/strategies', '', seconds) })
      assert.equal(res.statusCode, 401)
      assert.equal(res.json().error.code, 'TIMESTAMP_EXPIRED')
      assert.match(res.json().error.message, new RegExp(`X-Service-Timestamp ${seconds} is in seconds; send Unix time in milliseconds \\(${seconds * 1000} for that moment`))
      assert.match(res.json().error.request_id, /^[0-9a-f-]{36}$/)
      const micro = await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: signedHeaders(key, 'GET', '/v1/strategies', '', now * 1000) })
      assert.match(micro.json().error.message, /is in microseconds/)
      // Plain drift says how far and which way.
      const late = await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: signedHeaders(key, 'GET', '/v1/strategies', '', now - 60_000) })
      assert.match(late.json().error.message, /is 600\d\d ms behind server time/)
      const bad = await t.app.inject({ method: 'GET', url: '/v1/strategies', headers: { ...signedHeaders(key, 'GET', '/v1/strategies'), 'x-service-timestamp': '2026-11-27T10:00:00Z' } })
      assert.equal(bad.json().error.code, 'UNAUTHENTICATED')
      assert.match(bad.json().error.message, /must be Unix time in milliseconds, 13 digits/)
    })

    it('says what the server signed for a mismatch, with method and path, and never the secret or the expected signature', async () => {
      const email = `slips-${process.pid}@example.test`
      const key = await t.createKey(['strategies:write'], email)
      const body = JSON.stringify(strategy)
      const ts = String(t.clock.now())
      const expected = signRequest(key.api_secret, ts, 'POST', '/v1/strategies?dry=1', body)
      const headers = { 'x-service-api-key': key.api_key, 'x-service-timestamp': ts, 'content-type': 'application/json' }
      const send = (signature: string) => t.app.inject({ method: 'POST', url: '/v1/strategies?dry=1', payload: body, headers: { ...headers, 'x-service-signature': signature } })

      const wrong = await send(signRequest(`${key.api_secret}x`, ts, 'POST', '/v1/strategies?dry=1', body))
      assert.equal(wrong.statusCode, 401)
      const message: string = wrong.json().error.message
      assert.equal(wrong.json().error.code, 'INVALID_SIGNATURE')
      assert.ok(message.startsWith('signature does not match POST /v1/strategies: '), message)
      assert.ok(message.includes(`HMAC-SHA256(api_secret, timestamp + METHOD + path_with_query + raw_body), here "${ts}" + "POST" + "/v1/strategies?dry=1" + the ${body.length}-byte raw body`), message)
      for (const response of [wrong.body]) {
        assert.ok(!response.includes(key.api_secret) && !response.includes(expected), 'no secret, no expected signature')
      }
      // The usual slips are named.
      const noQuery = await send(signRequest(key.api_secret, ts, 'POST', '/v1/strategies', body))
      assert.match(noQuery.json().error.message, /your signature is that of the path without its query string: sign "\/v1\/strategies\?dry=1" as sent/)
      const noBody = await send(signRequest(key.api_secret, ts, 'POST', '/v1/strategies?dry=1', ''))
      assert.match(noBody.json().error.message, /your signature is that of an empty body/)
      const lower = await send(signatureWithLowercaseMethod(key.api_secret, ts, 'post', '/v1/strategies?dry=1', body))
      assert.match(lower.json().error.message, /your signature has the method in lowercase: sign "POST"/)
      const base64 = await send(Buffer.from(expected, 'hex').toString('base64'))
      assert.match(base64.json().error.message, /X-Service-Signature must be 64 hex digits \(got 44 characters\)/)
      // None of the refused requests created anything.
      const listed = await t.signed(await t.createKey(['strategies:read'], email), 'GET', '/v1/strategies')
      assert.deepEqual(listed.json().data, [])
    })

    it('answers a lowercase or unknown method in the error envelope with a request id, not Fastify\'s bare body', async () => {
      const lower = await raw(port, 'get /v1/strategies HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
      assert.equal(lower.status, 400)
      const error = JSON.parse(lower.body).error
      assert.equal(error.code, 'INVALID_PARAMETER')
      assert.match(error.message, /the HTTP method "get" must be uppercase: send GET \/v1\/strategies/)
      assert.match(error.request_id, /^[0-9a-f-]{36}$/)
      assert.equal(lower.headers['x-request-id'], error.request_id)
      const unknown = await raw(port, 'FETCH /v1/strategies HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
      assert.equal(unknown.status, 400)
      assert.match(JSON.parse(unknown.body).error.message, /"FETCH" is not an HTTP method/)
      // Public paths keep their shape.
      const publicPath = await raw(port, 'get /strategies HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
      assert.match(JSON.parse(publicPath.body).detail, /must be uppercase/)
      // An unknown /v1 path is a 404 in the envelope.
      const missing = await raw(port, 'GET /v1/no-such-thing HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n')
      assert.equal(missing.status, 404)
      assert.equal(JSON.parse(missing.body).error.code, 'NOT_FOUND')
      assert.match(JSON.parse(missing.body).error.request_id, /^[0-9a-f-]{36}$/)
    })

    it('renders a value outside a set in one phrasing on every /v1 endpoint; public routes keep FastAPI\'s items', async () => {
      const key = await t.createKey(['strategies:write'])
      const res = await t.signed(key, 'POST', '/v1/strategies', { ...strategy, timeframe: '2h' })
      assert.equal(res.statusCode, 400)
      assert.equal(res.json().error.field, 'timeframe')
      assert.equal(res.json().error.message, 'timeframe: must be one of 1m, 5m, 15m, 1h, 4h, 1d; got "2h"')
      // Another endpoint, another set: the same words.
      const hooks = await t.createKey(['webhooks:read'])
      const status = await t.signed(hooks, 'GET', '/v1/webhooks?status=gone')
      assert.equal(status.statusCode, 400, status.body)
      assert.equal(status.json().error.message, 'status: must be one of active, paused, broken; got "gone"')
      // A symbol's pattern in words, not `must match pattern "^[A-Z0-9]{2,30}$"`.
      const lower = await t.signed(key, 'POST', '/v1/strategies', { ...strategy, symbols: ['btcusdt'] })
      assert.equal(lower.json().error.message, 'symbols.0: symbols are upper case, e.g. BTCUSDT; got "btcusdt", send "BTCUSDT"')
      const order = await t.app.inject({
        method: 'POST',
        url: '/orders/auth',
        payload: { api_key: 'k', api_secret: 's', symbol: 'BTCUSDT', side: 'buy', type: 'MARKET', quantity: '0.01' },
      })
      assert.equal(order.statusCode, 422)
      assert.deepEqual(order.json().detail, [{ type: 'enum', loc: ['body', 'side'], msg: "Input should be 'BUY' or 'SELL'" }])
    })

    it('refuses a loopback webhook url naming WEBHOOK_ALLOW_PRIVATE_HOSTS, creating nothing', async () => {
      const key = await t.createKey(['webhooks:read', 'webhooks:write'])
      const res = await t.signed(key, 'POST', '/v1/webhooks', { url: 'https://127.0.0.1:9443/hook', events: ['backtest.job_done'] })
      assert.equal(res.statusCode, 400)
      assert.equal(res.json().error.code, 'INVALID_PARAMETER')
      assert.match(res.json().error.message, /127\.0\.0\.1 is a loopback address; .*start the server with WEBHOOK_ALLOW_PRIVATE_HOSTS=true/)
      assert.deepEqual((await t.signed(key, 'GET', '/v1/webhooks')).json().data, [])
    })

    it('tells a request without credentials on a Bearer-only route that it needs Authorization: Bearer', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/v1/api-keys' })
      assert.equal(res.statusCode, 401)
      assert.equal(res.json().error.code, 'UNAUTHENTICATED')
      assert.match(res.json().error.message, /needs a signed-in user: send Authorization: Bearer <app token>/)
      assert.doesNotMatch(res.json().error.message, /X-Service-Signature/)
      // A signed API key is still refused there, with 403 saying so.
      const signedKey = await t.signed(await t.createKey(['strategies:read']), 'GET', '/v1/api-keys')
      assert.equal(signedKey.statusCode, 403)
      assert.match(signedKey.json().error.message, /Authorization: Bearer/)
      const signedRoute = await t.app.inject({ method: 'GET', url: '/v1/strategies' })
      assert.match(signedRoute.json().error.message, /signed request/)
    })
  })
}

/** A client's slip: the method hashed as it typed it, in lowercase. */
function signatureWithLowercaseMethod(secret: string, ts: string, method: string, url: string, body: string): string {
  // signRequest uppercases the method, as the server does; build the slip by hand.
  return crypto.createHmac('sha256', secret).update(ts + method + url + body).digest('hex')
}

describe('webhook urls on loopback or private hosts', () => {
  it('name the WEBHOOK_ALLOW_PRIVATE_HOSTS setting in the refusal', async () => {
    for (const url of ['https://127.0.0.1:9443/hook', 'https://10.1.2.3/hook', 'https://[::1]/hook']) {
      const problem = await vetWebhookUrl(url, { allowPrivateHosts: false })
      assert.match(problem ?? 'accepted', /WEBHOOK_ALLOW_PRIVATE_HOSTS=true/, url)
    }
    assert.equal(await vetWebhookUrl('https://127.0.0.1:9443/hook', { allowPrivateHosts: true }), undefined)
  })
})
